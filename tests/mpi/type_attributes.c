/* Attributes cached on datatypes (MPI_Type_create_keyval ... MPI_Type_delete_attr, MPI_TYPE_DUP_FN,
 * MPI_TYPE_NULL_COPY_FN), copied by MPI_Type_dup and deleted by MPI_Type_free; keys of one kind refused
 * on another; window keyvals (no windows yet: their attributes are MPI_ERR_WIN); and the constants of
 * MPI-3.1's mpi.h whose calls come later, which programs name at compile time. One rank is enough. */
#include "check.h"

static int deletes;
static int copies;

static int on_delete(MPI_Datatype type, int keyval, void *value, void *extra) {
  (void)type;
  (void)keyval;
  CHECK(extra == &deletes, "extra state");
  ++*(int *)value;
  ++deletes;
  return MPI_SUCCESS;
}

static int on_copy(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag) {
  ++copies;
  return MPI_TYPE_DUP_FN(type, keyval, extra, in, out, flag);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int copied_key = MPI_KEYVAL_INVALID, kept_key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Type_create_keyval(on_copy, on_delete, &copied_key, &deletes));
  CHECK_MPI(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, on_delete, &kept_key, &deletes));
  MPI_Datatype vec, dup;
  CHECK_MPI(MPI_Type_vector(3, 1, 2, MPI_INT, &vec));
  int a = 0, b = 0;
  CHECK_MPI(MPI_Type_set_attr(vec, copied_key, &a));
  CHECK_MPI(MPI_Type_set_attr(vec, kept_key, &b));
  int *got = NULL, flag = 0;
  CHECK_MPI(MPI_Type_get_attr(vec, copied_key, &got, &flag));
  CHECK(flag && got == &a, "MPI_Type_get_attr");
  /* Replacing a value deletes the old one. */
  CHECK_MPI(MPI_Type_set_attr(vec, kept_key, &b));
  CHECK(deletes == 1 && b == 1, "replacing ran the delete callback (%d)", deletes);
  CHECK_MPI(MPI_Type_dup(vec, &dup));
  CHECK(copies == 1, "copy callback ran %d times", copies);
  CHECK_MPI(MPI_Type_get_attr(dup, copied_key, &got, &flag));
  CHECK(flag && got == &a, "MPI_TYPE_DUP_FN copied the value");
  CHECK_MPI(MPI_Type_get_attr(dup, kept_key, &got, &flag));
  CHECK(!flag, "MPI_TYPE_NULL_COPY_FN copied nothing");
  CHECK_MPI(MPI_Type_free(&dup));
  CHECK(deletes == 2 && a == 1, "freeing the duplicate deleted its attribute");
  CHECK_MPI(MPI_Type_delete_attr(vec, kept_key));
  CHECK(deletes == 3 && b == 2, "MPI_Type_delete_attr");
  CHECK_MPI(MPI_Type_free(&vec));
  CHECK(deletes == 4 && a == 2, "freeing the type deleted its attribute");
  /* Predefined types cache attributes too. */
  static int c = 0;
  CHECK_MPI(MPI_Type_set_attr(MPI_INT, copied_key, &c));
  CHECK_MPI(MPI_Type_get_attr(MPI_INT, copied_key, &got, &flag));
  CHECK(flag && got == &c, "attribute on MPI_INT");
  CHECK_MPI(MPI_Type_delete_attr(MPI_INT, copied_key));

  /* Keys of one kind are refused on another. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int comm_key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &comm_key, NULL));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, comm_key, &c));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_set_attr(MPI_COMM_WORLD, copied_key, &c));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Comm_get_attr(MPI_COMM_WORLD, copied_key, &got, &flag));
  CHECK_CLASS(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&comm_key));
  CHECK_MPI(MPI_Comm_free_keyval(&comm_key));
  CHECK_MPI(MPI_Type_free_keyval(&copied_key));
  CHECK_MPI(MPI_Type_free_keyval(&kept_key));
  CHECK(copied_key == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval resets the key");

  /* Window keyvals exist; windows do not yet. */
  int win_key = MPI_KEYVAL_INVALID;
  CHECK_MPI(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &win_key, NULL));
  CHECK_CLASS(MPI_ERR_WIN, MPI_Win_set_attr(MPI_WIN_NULL, win_key, &c));
  CHECK_MPI(MPI_Win_free_keyval(&win_key));

  /* Constants programs name before the calls behind them exist here. */
  const int io_modes[] = {MPI_MODE_CREATE, MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR, MPI_MODE_DELETE_ON_CLOSE,
                          MPI_MODE_UNIQUE_OPEN, MPI_MODE_EXCL, MPI_MODE_APPEND, MPI_MODE_SEQUENTIAL};
  int all = 0;
  for (int i = 0; i < 9; ++i) {
    CHECK((all & io_modes[i]) == 0, "MPI_MODE_* bits overlap");
    all |= io_modes[i];
  }
  CHECK((all & (MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED)) == 0,
        "file modes overlap the one-sided assertions");
  MPI_File file = MPI_FILE_NULL;
  (void)file;
  CHECK(MPI_SEEK_SET != MPI_SEEK_CUR && MPI_SEEK_CUR != MPI_SEEK_END, "MPI_SEEK_*");
  CHECK(MPI_DISTRIBUTE_BLOCK != MPI_DISTRIBUTE_CYCLIC && MPI_DISTRIBUTE_NONE != MPI_DISTRIBUTE_DFLT_DARG, "MPI_DISTRIBUTE_*");
  CHECK(MPI_TYPECLASS_INTEGER != MPI_TYPECLASS_REAL && MPI_TYPECLASS_REAL != MPI_TYPECLASS_COMPLEX, "MPI_TYPECLASS_*");
  CHECK(MPI_ARGV_NULL == NULL && MPI_ARGVS_NULL == NULL && MPI_ERRCODES_IGNORE == NULL, "null arguments");
  CHECK(MPI_F_STATUS_IGNORE != NULL && MPI_F_STATUSES_IGNORE != NULL, "Fortran's status sentinels");
  CHECK(MPI_WIN_BASE != MPI_WIN_SIZE && MPI_WIN_FLAVOR_CREATE != MPI_WIN_FLAVOR_SHARED && MPI_WIN_UNIFIED != MPI_WIN_SEPARATE,
        "window attributes");
  int size = 0;
  CHECK_MPI(MPI_Type_size(MPI_CXX_BOOL, &size));
  CHECK(size == 1, "MPI_CXX_BOOL is %d bytes", size);
  CHECK_MPI(MPI_Type_size(MPI_DOUBLE_PRECISION, &size));
  CHECK(size == 8, "MPI_DOUBLE_PRECISION is %d bytes", size);
  CHECK_MPI(MPI_Type_size(MPI_INTEGER8, &size));
  CHECK(size == 8, "MPI_INTEGER8 is %d bytes", size);
  CHECK(MPI_MAX_PORT_NAME > 0 && MPI_MAX_DATAREP_STRING > 0 && MPI_DISPLACEMENT_CURRENT < 0, "limits");

  printf("type_attributes passed\n");
  CHECK_MPI(MPI_Finalize());
  return 0;
}
