/* MPI-IO's error paths (MPI-3.1 sections 13.2 and 13.7): errors from the file system come back with MPI's
 * I/O classes; files start with MPI_ERRORS_RETURN; a handler set on MPI_FILE_NULL serves opens, one set on
 * a file serves that file, and MPI_File_call_errhandler calls it. Tests run as root, so only errors root
 * cannot bypass are used (O_EXCL, a path below a regular file, a file opened read-only, bad amodes). */
#include <fcntl.h>
#include <unistd.h>

#include "io_common.h"

static int calls;
static MPI_File seen_file;
static int seen_code;

static void file_handler(MPI_File *file, int *code, ...) {
  ++calls;
  seen_file = *file;
  seen_code = *code;
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  io_make_dir(MPI_COMM_WORLD, "io-errors");
  char missing[600], existing[600], below[700];
  io_path(missing, sizeof missing, "missing");
  io_path(existing, sizeof existing, "existing");
  snprintf(below, sizeof below, "%s/inside", existing);
  MPI_File fh = MPI_FILE_NULL;

  /* The default for files is MPI_ERRORS_RETURN (MPI_COMM_WORLD's fatal handler does not apply). */
  MPI_Errhandler eh;
  CHECK_MPI(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
  CHECK(eh == MPI_ERRORS_RETURN, "files start with MPI_ERRORS_RETURN");
  CHECK_CLASS(MPI_ERR_NO_SUCH_FILE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  CHECK(fh == MPI_FILE_NULL, "a failed open gives MPI_FILE_NULL");

  /* Bad amodes, on every rank alike. */
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                                           MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY | MPI_MODE_EXCL,
                                           MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | MPI_MODE_WRONLY,
                                           MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                                           MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_AMODE, MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR | 0x10000, MPI_INFO_NULL, &fh));
  CHECK(access(missing, F_OK) != 0, "a refused open creates nothing");

  /* Create it; EXCL then refuses it on every rank. */
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                          MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_close(&fh));
  CHECK(fh == MPI_FILE_NULL, "close sets the handle to MPI_FILE_NULL");
  CHECK_CLASS(MPI_ERR_FILE_EXISTS, MPI_File_open(MPI_COMM_WORLD, existing,
                                                 MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
  /* A path below a regular file: ENOTDIR, which root gets too. */
  CHECK_CLASS(MPI_ERR_BAD_FILE, MPI_File_open(MPI_COMM_WORLD, below, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                              MPI_INFO_NULL, &fh));
  /* A directory is not a file. */
  CHECK_CLASS(MPI_ERR_BAD_FILE, MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  if (rank == 0) {
    CHECK_CLASS(MPI_ERR_NO_SUCH_FILE, MPI_File_delete(missing, MPI_INFO_NULL));
    CHECK_CLASS(MPI_ERR_BAD_FILE, MPI_File_delete(below, MPI_INFO_NULL));
  }

  /* Writing a file opened read-only; reading one opened write-only. */
  char byte = 'x';
  MPI_Status status;
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_READ_ONLY, MPI_File_write_at(fh, 0, &byte, 1, MPI_CHAR, &status));
  CHECK_CLASS(MPI_ERR_READ_ONLY, MPI_File_write_at_all(fh, 0, &byte, 1, MPI_CHAR, &status));
  CHECK_CLASS(MPI_ERR_READ_ONLY, MPI_File_set_size(fh, 10));
  CHECK_CLASS(MPI_ERR_ARG, MPI_File_read_at(fh, -1, &byte, 1, MPI_CHAR, &status));
  CHECK_CLASS(MPI_ERR_ARG, MPI_File_seek(fh, 0, 12345));
  /* external32 only for types of the same size in it as here (MPI_LONG: 4 bytes there, 8 here). */
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
  CHECK_CLASS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "nonsense", MPI_INFO_NULL));
  /* A filetype that is not made of etypes. */
  CHECK_CLASS(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, MPI_SHORT, "native", MPI_INFO_NULL));
  /* Decreasing displacements: MPI forbids them in filetypes. */
  int lengths[2] = {1, 1};
  int displs[2] = {4, 0};
  MPI_Datatype backwards;
  CHECK_MPI(MPI_Type_indexed(2, lengths, displs, MPI_INT, &backwards));
  CHECK_MPI(MPI_Type_commit(&backwards));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_File_set_view(fh, 0, MPI_INT, backwards, "native", MPI_INFO_NULL));
  CHECK_MPI(MPI_Type_free(&backwards));
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
  CHECK_CLASS(MPI_ERR_ACCESS, MPI_File_read_at(fh, 0, &byte, 1, MPI_CHAR, &status));
  /* Only a whole number of etypes can be accessed. */
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
  CHECK_CLASS(MPI_ERR_ARG, MPI_File_write_at(fh, 0, &byte, 1, MPI_CHAR, &status));

  /* A handler set on the file gets that file's errors; the call still returns the class. */
  MPI_Errhandler mine;
  CHECK_MPI(MPI_File_create_errhandler(file_handler, &mine));
  CHECK_MPI(MPI_File_set_errhandler(fh, mine));
  CHECK_MPI(MPI_File_get_errhandler(fh, &eh));
  CHECK(eh == mine, "MPI_File_get_errhandler gives the handler set");
  CHECK_MPI(MPI_Errhandler_free(&eh));
  int rc = MPI_File_read_at(fh, 0, &byte, 1, MPI_CHAR, &status);
  CHECK(rc == MPI_ERR_ACCESS, "the read returned %d, not MPI_ERR_ACCESS", rc);
  CHECK(calls == 1 && seen_file == fh && seen_code == MPI_ERR_ACCESS,
        "the file's handler ran once with the file and MPI_ERR_ACCESS (calls %d, code %d)", calls, seen_code);
  CHECK_MPI(MPI_File_call_errhandler(fh, MPI_ERR_IO));
  CHECK(calls == 2 && seen_file == fh && seen_code == MPI_ERR_IO, "MPI_File_call_errhandler calls it");
  CHECK_MPI(MPI_File_close(&fh));

  /* A handler set on MPI_FILE_NULL: opens use it, and new files start with it. */
  CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
  rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  CHECK(rc == MPI_ERR_NO_SUCH_FILE, "open returned %d", rc);
  CHECK(calls == 3 && seen_file == MPI_FILE_NULL && seen_code == MPI_ERR_NO_SUCH_FILE,
        "the MPI_FILE_NULL handler got the failed open");
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, existing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_get_errhandler(fh, &eh));
  CHECK(eh == mine, "a new file starts with MPI_FILE_NULL's handler");
  CHECK_MPI(MPI_Errhandler_free(&eh));
  CHECK_MPI(MPI_File_close(&fh));
  /* A handle that names no file: MPI_FILE_NULL's handler, MPI_ERR_FILE. */
  rc = MPI_File_get_size(fh, NULL);
  CHECK(rc == MPI_ERR_FILE && calls == 4 && seen_file == MPI_FILE_NULL, "a closed handle is MPI_ERR_FILE (%d)", rc);
  CHECK_MPI(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
  CHECK_MPI(MPI_Errhandler_free(&mine));
  CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh, "c2f and f2c are inverse");

  /* Register_datarep: the predefined names exist already. */
  CHECK_CLASS(MPI_ERR_DUP_DATAREP, MPI_Register_datarep("native", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                                        NULL, NULL));
  io_remove_dir(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("io_errors: ok\n");
  return 0;
}
