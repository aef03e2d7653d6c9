/* MPI-IO files, views and independent access (MPI-3.1 sections 13.2-13.4) at any number of ranks: sizes,
 * hints, group and amode; a view with holes (a vector filetype) and a derived memory type; the individual
 * file pointer, seek and byte offsets; reading past the end of file gives a short count; the nonblocking
 * forms, including iwrite_all followed by communication before the wait; APPEND and DELETE_ON_CLOSE. */
#include <sys/stat.h>
#include <unistd.h>

#include "io_common.h"

#define INTS 64

static long long file_size(const char *path) {
  struct stat st;
  CHECK(stat(path, &st) == 0, "stat %s", path);
  return (long long)st.st_size;
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  io_make_dir(MPI_COMM_WORLD, "io-basic");
  char path[600];
  io_path(path, sizeof path, "data");
  MPI_File fh;
  MPI_Status status;
  int count = -1;

  MPI_Info info;
  CHECK_MPI(MPI_Info_create(&info));
  CHECK_MPI(MPI_Info_set(info, "cb_buffer_size", "1048576"));
  CHECK_MPI(MPI_Info_set(info, "some_other_hint", "kept"));
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
  CHECK_MPI(MPI_Info_free(&info));
  CHECK(io_info_number(fh, "cb_buffer_size") == 1048576, "cb_buffer_size is honoured");
  CHECK_MPI(MPI_File_get_info(fh, &info));
  char value[64];
  int flag = 0;
  CHECK_MPI(MPI_Info_get(info, "some_other_hint", sizeof value - 1, value, &flag));
  CHECK(flag && strcmp(value, "kept") == 0, "other hints are kept");
  CHECK_MPI(MPI_Info_free(&info));
  int amode = 0;
  CHECK_MPI(MPI_File_get_amode(fh, &amode));
  CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %d", amode);
  MPI_Group group, world_group;
  int result = 0;
  CHECK_MPI(MPI_File_get_group(fh, &group));
  CHECK_MPI(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_MPI(MPI_Group_compare(group, world_group, &result));
  CHECK(result == MPI_IDENT, "the file's group is the communicator's");
  MPI_Group_free(&group);
  MPI_Group_free(&world_group);
  int atomic = 1;
  CHECK_MPI(MPI_File_get_atomicity(fh, &atomic));
  CHECK(atomic == 0, "files start nonatomic");

  /* Sizes: set_size, preallocate (never shrinks), get_size. Rank 0 resizes for all and does not wait
   * for the others (a rank may run ahead into the next resize): barriers before each check. */
  MPI_Offset got = -1;
  CHECK_MPI(MPI_File_set_size(fh, 1000));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_get_size(fh, &got));
  CHECK(got == 1000, "set_size 1000 gave %lld", got);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_preallocate(fh, 500));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_get_size(fh, &got));
  CHECK(got == 1000, "preallocate does not shrink (%lld)", got);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_preallocate(fh, 4096));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_get_size(fh, &got));
  CHECK(got == 4096, "preallocate 4096 gave %lld", got);
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_set_size(fh, 0));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));

  /* A view with holes: rank r sees ints r, r+size, r+2*size ... (a resized vector of one int). */
  MPI_Datatype strided;
  CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)(size * sizeof(int)), &strided));
  CHECK_MPI(MPI_Type_commit(&strided));
  const MPI_Offset header = 16;
  CHECK_MPI(MPI_File_set_view(fh, header + rank * (MPI_Offset)sizeof(int), MPI_INT, strided, "native", MPI_INFO_NULL));
  MPI_Offset disp = -1;
  MPI_Datatype etype, filetype;
  char datarep[MPI_MAX_DATAREP_STRING];
  CHECK_MPI(MPI_File_get_view(fh, &disp, &etype, &filetype, datarep));
  CHECK(disp == header + rank * (MPI_Offset)sizeof(int) && etype == MPI_INT && strcmp(datarep, "native") == 0,
        "get_view gives the view back");
  int combiner = 0, ni, na, nd;
  CHECK_MPI(MPI_Type_get_envelope(filetype, &ni, &na, &nd, &combiner));
  CHECK(combiner != MPI_COMBINER_NAMED, "a derived filetype comes back as a new derived type");
  CHECK_MPI(MPI_Type_free(&filetype));
  MPI_Offset byte_offset = -1;
  CHECK_MPI(MPI_File_get_byte_offset(fh, 3, &byte_offset));
  CHECK(byte_offset == header + (3 * size + rank) * (MPI_Offset)sizeof(int), "byte offset of etype 3: %lld",
        byte_offset);

  /* The memory side derived too: every other int of a buffer twice as long. */
  int values[2 * INTS];
  for (int i = 0; i < 2 * INTS; ++i) values[i] = (i % 2 == 0) ? rank * 100000 + i / 2 : -1;
  MPI_Datatype every_other;
  CHECK_MPI(MPI_Type_vector(INTS, 1, 2, MPI_INT, &every_other));
  CHECK_MPI(MPI_Type_commit(&every_other));
  CHECK_MPI(MPI_File_write(fh, values, 1, every_other, &status));
  CHECK_MPI(MPI_Get_count(&status, every_other, &count));
  CHECK(count == 1, "write count %d", count);
  MPI_Offset position = -1;
  CHECK_MPI(MPI_File_get_position(fh, &position));
  CHECK(position == INTS, "the individual pointer advanced to %lld", position);
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  CHECK_MPI(MPI_File_sync(fh));
  CHECK_MPI(MPI_File_get_size(fh, &got));
  CHECK(got == header + (MPI_Offset)(INTS * size * sizeof(int)), "file size %lld after every rank's writes", got);

  /* Every rank reads the whole file back through a plain view and sees the interleaving. */
  int all[INTS * 64];
  CHECK(size <= 64, "at most 64 ranks");
  CHECK_MPI(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
  CHECK_MPI(MPI_File_read_at(fh, header, all, INTS * size, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == INTS * size, "read %d ints", count);
  for (int i = 0; i < INTS * size; ++i) {
    CHECK(all[i] == (i % size) * 100000 + i / size, "int %d is %d", i, all[i]);
  }
  /* Reading past the end of file: a short count, then zero. */
  CHECK_MPI(MPI_File_read_at(fh, header + (MPI_Offset)((INTS * size - 3) * sizeof(int)), all, 10, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 3, "read past the end gave %d ints, not 3", count);
  CHECK_MPI(MPI_File_read_at(fh, 1 << 20, all, 10, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 0, "read beyond the end gave %d", count);
  CHECK_MPI(MPI_File_read_at_all(fh, header + (MPI_Offset)((INTS * size - 2) * sizeof(int)), all, 5, MPI_INT, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 2, "collective read past the end gave %d ints, not 2", count);

  /* Through the strided view again, reading with the individual pointer into the derived memory type. */
  CHECK_MPI(MPI_File_set_view(fh, header + rank * (MPI_Offset)sizeof(int), MPI_INT, strided, "native", MPI_INFO_NULL));
  CHECK_MPI(MPI_File_get_position(fh, &position));
  CHECK(position == 0, "set_view resets the pointer");
  CHECK_MPI(MPI_File_seek(fh, 10, MPI_SEEK_SET));
  CHECK_MPI(MPI_File_seek(fh, -5, MPI_SEEK_CUR));
  CHECK_MPI(MPI_File_get_position(fh, &position));
  CHECK(position == 5, "seek set then cur: %lld", position);
  int one = 0;
  CHECK_MPI(MPI_File_read(fh, &one, 1, MPI_INT, &status));
  CHECK(one == rank * 100000 + 5, "the 6th int of the view is %d", one);
  /* The end of file moves when other ranks write on: everyone seeks before anyone writes again. */
  CHECK_MPI(MPI_File_seek(fh, -1, MPI_SEEK_END));
  CHECK_MPI(MPI_File_read(fh, &one, 1, MPI_INT, &status));
  CHECK(one == rank * 100000 + INTS - 1, "the last int of the view is %d", one);
  for (int i = 0; i < 2 * INTS; ++i) values[i] = -7;
  CHECK_MPI(MPI_File_read_at(fh, 0, values, 1, every_other, &status));
  for (int i = 0; i < 2 * INTS; ++i) {
    CHECK(values[i] == ((i % 2 == 0) ? rank * 100000 + i / 2 : -7), "derived read: element %d is %d", i, values[i]);
  }
  MPI_Aint extent = 0;
  CHECK_MPI(MPI_File_get_type_extent(fh, every_other, &extent));
  CHECK(extent == (MPI_Aint)((2 * INTS - 1) * sizeof(int)), "type extent in the file %ld", (long)extent);

  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  /* Nonblocking: iwrite_at, iread_at, and iwrite_all then a ring exchange before the wait. */
  int mine = 1000 + rank, back = 0;
  MPI_Request request;
  CHECK_MPI(MPI_File_iwrite_at(fh, INTS, &mine, 1, MPI_INT, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 1 && request == MPI_REQUEST_NULL, "iwrite_at completed one int");
  CHECK_MPI(MPI_File_iread_at(fh, INTS, &back, 1, MPI_INT, &request));
  int done = 0;
  while (!done) CHECK_MPI(MPI_Test(&request, &done, &status));
  CHECK(back == mine, "iread_at read %d", back);
  CHECK_MPI(MPI_File_seek(fh, INTS + 1, MPI_SEEK_SET));
  mine = 2000 + rank;
  CHECK_MPI(MPI_File_iwrite_all(fh, &mine, 1, MPI_INT, &request));
  int token = rank, from = -1;
  CHECK_MPI(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 5, &from, 1, MPI_INT, (rank + size - 1) % size, 5,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(from == (rank + size - 1) % size, "the ring went around");
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 1, "iwrite_all wrote %d", count);
  /* A nonblocking collective started by one rank before a message another rank waits for before it
   * starts its own: legal MPI, and it must not deadlock. */
  if (size > 1 && rank < 2) {
    mine = 4000 + rank;
    if (rank == 0) {
      CHECK_MPI(MPI_File_iwrite_at_all(fh, INTS + 3, &mine, 1, MPI_INT, &request));
      CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 6, MPI_COMM_WORLD));
    } else {
      CHECK_MPI(MPI_Recv(&token, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      CHECK_MPI(MPI_File_iwrite_at_all(fh, INTS + 3, &mine, 1, MPI_INT, &request));
    }
  } else {
    mine = 4000 + rank;
    CHECK_MPI(MPI_File_iwrite_at_all(fh, INTS + 3, &mine, 1, MPI_INT, &request));
  }
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK_MPI(MPI_File_read_at(fh, INTS + 3, &back, 1, MPI_INT, &status));
  CHECK(back == mine, "iwrite_at_all wrote %d", back);
  mine = 2000 + rank;
  CHECK_MPI(MPI_File_iread_at_all(fh, INTS + 1, &back, 1, MPI_INT, &request));
  CHECK_MPI(MPI_Wait(&request, &status));
  CHECK(back == mine, "iread_at_all read %d", back);
  CHECK_MPI(MPI_File_iread(fh, &back, 1, MPI_INT, &request));
  CHECK_MPI(MPI_Request_free(&request));

  /* Split collectives. */
  mine = 3000 + rank;
  CHECK_MPI(MPI_File_write_at_all_begin(fh, INTS + 2, &mine, 1, MPI_INT));
  CHECK_CLASS(MPI_ERR_IO, MPI_File_read_all_begin(fh, &back, 1, MPI_INT));
  CHECK_MPI(MPI_File_write_at_all_end(fh, &mine, &status));
  CHECK_MPI(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 1, "write_at_all_end counted %d", count);
  CHECK_MPI(MPI_File_seek(fh, INTS + 2, MPI_SEEK_SET));
  CHECK_MPI(MPI_File_read_all_begin(fh, &back, 1, MPI_INT));
  CHECK_MPI(MPI_File_read_all_end(fh, &back, &status));
  CHECK(back == mine, "split read gave %d", back);
  CHECK_MPI(MPI_File_close(&fh));
  CHECK_MPI(MPI_Type_free(&strided));
  CHECK_MPI(MPI_Type_free(&every_other));

  /* APPEND puts the pointer at the end; DELETE_ON_CLOSE removes the file at close. */
  CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
  const long long before = file_size(path);
  CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_APPEND | MPI_MODE_DELETE_ON_CLOSE,
                          MPI_INFO_NULL, &fh));
  CHECK_MPI(MPI_File_get_position(fh, &position));
  CHECK(position == before, "APPEND starts at the end (%lld, file %lld)", position, before);
  CHECK_MPI(MPI_File_get_position_shared(fh, &position));
  CHECK(position == before, "APPEND: the shared pointer too (%lld)", position);
  CHECK_MPI(MPI_File_close(&fh));
  CHECK(access(path, F_OK) != 0, "DELETE_ON_CLOSE removed the file");
  io_remove_dir(MPI_COMM_WORLD);
  CHECK_MPI(MPI_Finalize());
  if (rank == 0) printf("io_basic: ok\n");
  return 0;
}
