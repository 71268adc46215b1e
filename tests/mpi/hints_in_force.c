/* hints_in_force: MPI_File_get_info reports stagio's hints with the values in force.
 *
 *   STAGIO_IOND_TOKEN=secret mpiexec -n N env LD_PRELOAD=libstagio.so hints_in_force DIR
 *
 * The file is opened twice with hints that cannot take effect as given: more aggregators than
 * ranks, and settings that stagio reads once, at MPI_Init (the daemons, the stats file). get_info
 * must report what the file really does: no daemons and no stats file (none were set at
 * MPI_Init), the block size asked for, the token only as "(set)", and the cache the file uses.
 * The first open turns the node cache off, so that the file uses the collective cache: its
 * aggregators are every rank at several ranks on one node, and none at one rank (a file of one
 * rank has no collective cache). The second open keeps the default: at several ranks the node
 * cache, with no aggregators. No value may be empty: Open MPI refuses empty values, and a
 * program that copies the info it got into another would fail there. Prints "N passed, M
 * failed"; exits 1 on a failure.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int g_rank, g_passed, g_failed;

static void expect(int ok, const char *what, const char *got) {
  if (ok) {
    g_passed++;
    return;
  }
  g_failed++;
  fprintf(stderr, "FAIL [rank %d] %s (got '%s')\n", g_rank, what, got ? got : "(absent)");
}

/* The value of `key` in `info`, or NULL when absent. */
static const char *value_of(MPI_Info info, const char *key, char *value, int size) {
  int flag = 0;
  MPI_Info_get(info, key, size - 1, value, &flag);
  return flag ? value : NULL;
}

/* Opens the file with the hints, the node cache on or off, checks what get_info reports and
 * closes it. */
static void check_open(const char *path, int nranks, int node_cache) {
  MPI_Info hints;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "stagio_aggregators", "513");
  MPI_Info_set(hints, "stagio_iond", "unix:/nowhere/stagio.sock");
  MPI_Info_set(hints, "stagio_stats", "/nowhere/stats.json");
  MPI_Info_set(hints, "stagio_block_size", "64K");
  MPI_Info_set(hints, "stagio_node_cache", node_cache ? "enable" : "disable");
  MPI_File file;
  if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, hints, &file) !=
      MPI_SUCCESS) {
    fprintf(stderr, "hints_in_force: cannot open %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Info_free(&hints);

  MPI_Info used;
  expect(MPI_File_get_info(file, &used) == MPI_SUCCESS, "MPI_File_get_info must succeed", "");
  int keys = 0, stagio_keys = 0;
  MPI_Info_get_nkeys(used, &keys);
  char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
  for (int i = 0; i < keys; i++) {
    MPI_Info_get_nthkey(used, i, key);
    if (strncmp(key, "stagio_", 7) != 0) continue;
    stagio_keys++;
    const char *got = value_of(used, key, value, sizeof value);
    char what[MPI_MAX_INFO_KEY + 64];
    snprintf(what, sizeof what, "%s must have a value", key);
    expect(got && got[0] != '\0', what, got);
    snprintf(what, sizeof what, "%s must not show the token", key);
    expect(!got || strstr(got, "secret") == NULL, what, got);
  }
  expect(stagio_keys > 0, "get_info must report stagio's hints", NULL);

  const int node_cached = node_cache && nranks > 1;
  const char *node = value_of(used, "stagio_node_cache", value, sizeof value);
  expect(node && strcmp(node, node_cached ? "enable" : "disable") == 0,
         "stagio_node_cache must say whether the file uses it", node);
  const char *aggregators = value_of(used, "stagio_aggregators", value, sizeof value);
  if (nranks == 1 || node_cached) {
    expect(aggregators == NULL,
           "stagio_aggregators: a file of one rank, or in the node cache, has none", aggregators);
  } else {
    char every_rank[256] = "";
    for (int rank = 0; rank < nranks; rank++) {
      snprintf(every_rank + strlen(every_rank), sizeof every_rank - strlen(every_rank), "%s%d",
               rank ? "," : "", rank);
    }
    expect(aggregators && strcmp(aggregators, every_rank) == 0,
           "stagio_aggregators=513 on one node must report every rank", aggregators);
  }
  const char *collective = value_of(used, "stagio_collective_cache", value, sizeof value);
  expect(collective && strcmp(collective, nranks > 1 && !node_cached ? "enable" : "disable") == 0,
         "stagio_collective_cache must say whether the file uses it", collective);
  const char *iond = value_of(used, "stagio_iond", value, sizeof value);
  expect(iond == NULL, "stagio_iond given at open is not in force", iond);
  const char *stats = value_of(used, "stagio_stats", value, sizeof value);
  expect(stats == NULL, "stagio_stats given at open is not in force", stats);
  const char *block = value_of(used, "stagio_block_size", value, sizeof value);
  expect(block && strcmp(block, "64K") == 0, "stagio_block_size must be 64K", block);
  const char *token = value_of(used, "stagio_iond_token", value, sizeof value);
  expect(token && strcmp(token, "(set)") == 0, "stagio_iond_token must say only '(set)'", token);
  MPI_Info_free(&used);

  MPI_File_close(&file);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int nranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  char path[4096];
  snprintf(path, sizeof path, "%s/hints_in_force.dat", argc > 1 ? argv[1] : "/tmp");

  check_open(path, nranks, 0);
  check_open(path, nranks, 1);
  if (g_rank == 0) MPI_File_delete(path, MPI_INFO_NULL);
  int totals[2] = {g_passed, g_failed}, sums[2];
  MPI_Allreduce(totals, sums, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (g_rank == 0) printf("%d passed, %d failed\n", sums[0], sums[1]);
  MPI_Finalize();
  return sums[1] == 0 ? 0 : 1;
}
