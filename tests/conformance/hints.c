/* hints: MPI_File_get_info returns the hints in force as an info object the program owns, and
 * that object is itself valid input (MPI 4.0 section 14.2.8).
 *
 * A program may copy the hints it got into a new info and hand them back: to MPI_File_open of
 * another file and to MPI_File_set_info. Every value must therefore be a valid one: Open MPI
 * refuses an empty value with MPI_ERR_INFO_VALUE, raised on MPI_COMM_WORLD (fatal). The number
 * and names of the hints differ between MPI libraries and with stagio (it adds its own), so
 * only what the standard promises is compared.
 */
#include "conformance.h"

/* A new info holding every key of `from` with its value; sets *bad_key to a key whose value
 * could not be read or is empty (or leaves it ""). */
static MPI_Info copy_info(MPI_Info from, char *bad_key) {
  MPI_Info copy;
  MPI_Info_create(&copy);
  int keys = 0;
  MPI_Info_get_nkeys(from, &keys);
  bad_key[0] = '\0';
  for (int i = 0; i < keys; i++) {
    char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
    int length = 0, flag = 0;
    MPI_Info_get_nthkey(from, i, key);
    MPI_Info_get_valuelen(from, key, &length, &flag);
    if (flag) MPI_Info_get(from, key, MPI_MAX_INFO_VAL, value, &flag);
    if (!flag || length == 0) {
      snprintf(bad_key, MPI_MAX_INFO_KEY + 1, "%s", key);
      continue;
    }
    MPI_Info_set(copy, key, value);
  }
  return copy;
}

int main(int argc, char **argv) {
  conf_begin(&argc, &argv, "hints");
  conf_remove("hints.a");
  conf_remove("hints.b");

  MPI_Info asked;
  MPI_Info_create(&asked);
  MPI_Info_set(asked, "cb_buffer_size", "1048576");
  MPI_Info_set(asked, "conformance_unknown_hint", "ignored");  // MPI ignores unknown keys
  MPI_File file;
  int err = conf_open("hints.a", MPI_MODE_CREATE | MPI_MODE_RDWR, asked, &file);
  MPI_Info_free(&asked);
  conf_check("open_with_unknown_hint", err == MPI_SUCCESS, conf_class_name(err),
             "open failed: %s", conf_class_name(err));
  if (err != MPI_SUCCESS) return conf_end();

  MPI_Info used = MPI_INFO_NULL;
  err = MPI_File_get_info(file, &used);
  conf_check("get_info_succeeds", err == MPI_SUCCESS && used != MPI_INFO_NULL,
             conf_class_name(err), "get_info: %s", conf_class_name(err));
  if (err != MPI_SUCCESS) return conf_end();

  char bad_key[MPI_MAX_INFO_KEY + 1];
  MPI_Info copy = copy_info(used, bad_key);
  conf_check("every_value_not_empty", bad_key[0] == '\0', NULL, "key '%s' has no value",
             bad_key);

  MPI_File other;
  err = conf_open("hints.b", MPI_MODE_CREATE | MPI_MODE_RDWR, copy, &other);
  conf_check("copy_accepted_by_open", err == MPI_SUCCESS, conf_class_name(err),
             "open with the copied hints: %s", conf_class_name(err));
  if (err == MPI_SUCCESS) MPI_File_close(&other);

  err = MPI_File_set_info(file, copy);
  conf_check("copy_accepted_by_set_info", err == MPI_SUCCESS, conf_class_name(err),
             "set_info with the copied hints: %s", conf_class_name(err));
  MPI_Info_free(&copy);

  /* The info returned is the program's: changing or freeing it changes nothing in the file. */
  MPI_Info_set(used, "conformance_probe", "1");
  MPI_Info_free(&used);
  MPI_Info again = MPI_INFO_NULL;
  err = MPI_File_get_info(file, &again);
  int probe = 0;
  if (err == MPI_SUCCESS) {
    char value[8];
    MPI_Info_get(again, "conformance_probe", sizeof value - 1, value, &probe);
    MPI_Info copy_again = copy_info(again, bad_key);
    MPI_Info_free(&copy_again);
    MPI_Info_free(&again);
  }
  conf_check("returned_info_is_a_copy", err == MPI_SUCCESS && !probe, NULL,
             "get_info after set_info: %s, probe key %s", conf_class_name(err),
             probe ? "present" : "absent");
  conf_check("values_not_empty_after_set_info", bad_key[0] == '\0', NULL,
             "key '%s' has no value", bad_key);

  /* Data still goes where it should after the hints changed. */
  unsigned char out[1000], in[1000];
  conf_fill(out, sizeof out, conf.rank, conf.rank * (int64_t)sizeof out);
  MPI_Status status;
  err = MPI_File_write_at_all(file, conf.rank * (MPI_Offset)sizeof out, out, sizeof out,
                              MPI_BYTE, &status);
  if (err == MPI_SUCCESS) err = MPI_File_read_at_all(file, conf.rank * (MPI_Offset)sizeof out,
                                                     in, sizeof in, MPI_BYTE, &status);
  conf_check("data_after_set_info", err == MPI_SUCCESS && memcmp(in, out, sizeof in) == 0,
             conf_class_name(err), "write and read back: %s", conf_class_name(err));
  MPI_File_close(&file);

  /* MPI_INFO_NULL is a valid argument to open and set_info. */
  err = conf_open("hints.a", MPI_MODE_RDWR, MPI_INFO_NULL, &file);
  if (err == MPI_SUCCESS) {
    err = MPI_File_set_info(file, MPI_INFO_NULL);
    MPI_File_close(&file);
  }
  conf_check("info_null_accepted", err == MPI_SUCCESS, conf_class_name(err), "%s",
             conf_class_name(err));
  return conf_end();
}
