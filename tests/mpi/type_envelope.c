/* Datatype introspection (MPI-3.1 section 4.1.13): MPI_Type_get_envelope says how each type was made,
 * MPI_Type_get_contents gives the constructor's arguments back, with the types it was made of as their
 * predefined handles or as new derived types that have their own envelopes (and are freed by the
 * program). The old types are freed before the questions are asked: the answers must not depend on them.
 * Runs on every rank alone. */
#include <string.h>

#include "check.h"

static void envelope(MPI_Datatype type, int ni, int na, int nd, int combiner, const char *what) {
  int i = -1, a = -1, d = -1, c = -1;
  CHECK_MPI(MPI_Type_get_envelope(type, &i, &a, &d, &c));
  CHECK(i == ni && a == na && d == nd && c == combiner, "%s: envelope (%d, %d, %d, combiner %d), expected (%d, %d, %d, %d)",
        what, i, a, d, c, ni, na, nd, combiner);
}

int main(int argc, char **argv) {
  CHECK_MPI(MPI_Init(&argc, &argv));
  int ints[16];
  MPI_Aint addrs[16];
  MPI_Datatype types[16];

  envelope(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_INT");
  envelope(MPI_DOUBLE_INT, 0, 0, 0, MPI_COMBINER_NAMED, "MPI_DOUBLE_INT");

  MPI_Datatype contiguous, vector, hvector, indexed, hindexed, block, hblock, structure, resized, dup;
  CHECK_MPI(MPI_Type_contiguous(3, MPI_DOUBLE, &contiguous));
  envelope(contiguous, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "contiguous");
  CHECK_MPI(MPI_Type_get_contents(contiguous, 1, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 3 && types[0] == MPI_DOUBLE, "contiguous: count %d type %#x", ints[0], (unsigned)types[0]);

  CHECK_MPI(MPI_Type_vector(4, 2, 5, contiguous, &vector));
  envelope(vector, 3, 0, 1, MPI_COMBINER_VECTOR, "vector");
  CHECK_MPI(MPI_Type_create_hvector(2, 1, 48, MPI_INT, &hvector));
  envelope(hvector, 2, 1, 1, MPI_COMBINER_HVECTOR, "hvector");
  CHECK_MPI(MPI_Type_get_contents(hvector, 2, 1, 1, ints, addrs, types));
  CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 48 && types[0] == MPI_INT, "hvector contents");

  const int lengths[3] = {1, 2, 3}, displacements[3] = {0, 4, 9};
  const MPI_Aint bytes[3] = {0, 16, 40};
  CHECK_MPI(MPI_Type_indexed(3, lengths, displacements, MPI_FLOAT, &indexed));
  envelope(indexed, 7, 0, 1, MPI_COMBINER_INDEXED, "indexed");
  CHECK_MPI(MPI_Type_get_contents(indexed, 7, 0, 1, ints, addrs, types));
  const int indexed_ints[7] = {3, 1, 2, 3, 0, 4, 9};
  CHECK(memcmp(ints, indexed_ints, sizeof indexed_ints) == 0 && types[0] == MPI_FLOAT, "indexed contents");
  CHECK_MPI(MPI_Type_create_hindexed(3, lengths, bytes, MPI_FLOAT, &hindexed));
  envelope(hindexed, 4, 3, 1, MPI_COMBINER_HINDEXED, "hindexed");
  CHECK_MPI(MPI_Type_get_contents(hindexed, 4, 3, 1, ints, addrs, types));
  CHECK(ints[0] == 3 && ints[3] == 3 && addrs[2] == 40, "hindexed contents");
  CHECK_MPI(MPI_Type_create_indexed_block(3, 2, displacements, MPI_SHORT, &block));
  envelope(block, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
  CHECK_MPI(MPI_Type_get_contents(block, 5, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[4] == 9 && types[0] == MPI_SHORT, "indexed_block contents");
  CHECK_MPI(MPI_Type_create_hindexed_block(3, 2, bytes, MPI_SHORT, &hblock));
  envelope(hblock, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");

  /* A struct of a predefined type and the vector (a derived one); then the vector is freed. */
  const int struct_lengths[2] = {1, 2};
  const MPI_Aint struct_displacements[2] = {0, 8};
  const MPI_Datatype struct_types[2] = {MPI_CHAR, vector};
  CHECK_MPI(MPI_Type_create_struct(2, struct_lengths, struct_displacements, struct_types, &structure));
  CHECK_MPI(MPI_Type_free(&vector));
  CHECK_MPI(MPI_Type_free(&contiguous));
  envelope(structure, 3, 2, 2, MPI_COMBINER_STRUCT, "struct");
  CHECK_MPI(MPI_Type_get_contents(structure, 3, 2, 2, ints, addrs, types));
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && addrs[1] == 8 && types[0] == MPI_CHAR, "struct contents");
  /* The derived part comes back as a new type: the vector, made of the contiguous type, made of doubles. */
  MPI_Datatype inner = types[1];
  envelope(inner, 3, 0, 1, MPI_COMBINER_VECTOR, "the struct's vector");
  CHECK_MPI(MPI_Type_get_contents(inner, 3, 0, 1, ints, addrs, types));
  CHECK(ints[0] == 4 && ints[1] == 2 && ints[2] == 5, "the vector's arguments: %d %d %d", ints[0], ints[1], ints[2]);
  MPI_Datatype innermost = types[0];
  envelope(innermost, 1, 0, 1, MPI_COMBINER_CONTIGUOUS, "the vector's contiguous type");
  int size = 0;
  CHECK_MPI(MPI_Type_size(inner, &size));
  CHECK(size == 4 * 2 * 3 * 8, "the new vector is the same type: size %d", size);
  CHECK_MPI(MPI_Type_commit(&inner));  /* a real type: it commits and frees */
  CHECK_MPI(MPI_Type_free(&inner));
  CHECK_MPI(MPI_Type_free(&innermost));

  CHECK_MPI(MPI_Type_create_resized(MPI_INT, -4, 16, &resized));
  envelope(resized, 0, 2, 1, MPI_COMBINER_RESIZED, "resized");
  CHECK_MPI(MPI_Type_get_contents(resized, 0, 2, 1, ints, addrs, types));
  CHECK(addrs[0] == -4 && addrs[1] == 16 && types[0] == MPI_INT, "resized contents");
  CHECK_MPI(MPI_Type_dup(structure, &dup));
  envelope(dup, 0, 0, 1, MPI_COMBINER_DUP, "dup");
  CHECK_MPI(MPI_Type_get_contents(dup, 0, 0, 1, ints, addrs, types));
  envelope(types[0], 3, 2, 2, MPI_COMBINER_STRUCT, "the dup's struct");
  CHECK_MPI(MPI_Type_free(&types[0]));

  /* Wrong uses: contents of a predefined type, arrays too small. */
  CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_get_contents(indexed, 6, 0, 1, ints, addrs, types));
  CHECK_CLASS(MPI_ERR_ARG, MPI_Type_get_contents(structure, 3, 2, 1, ints, addrs, types));
  CHECK_CLASS(MPI_ERR_TYPE, MPI_Type_get_envelope(MPI_DATATYPE_NULL, ints, ints + 1, ints + 2, ints + 3));

  MPI_Datatype all[] = {hvector, indexed, hindexed, block, hblock, structure, resized, dup};
  for (unsigned k = 0; k < sizeof all / sizeof all[0]; ++k) CHECK_MPI(MPI_Type_free(&all[k]));
  CHECK_MPI(MPI_Finalize());
  return 0;
}
