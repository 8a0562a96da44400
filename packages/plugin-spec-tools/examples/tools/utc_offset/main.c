/* A spec tool (002): reads the JSON envelope on stdin, prints one JSON result on stdout. */
#include <stdio.h>
#include <time.h>

int main(void) {
  char buf[4096];
  size_t n, total = 0;
  while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) total += n;
  time_t now = time(NULL);
  struct tm local;
  char offset[8], stamp[32];
  if (localtime_r(&now, &local) == NULL) {
    printf("{\"ok\":false,\"kind\":\"clock\",\"message\":\"localtime failed\"}\n");
    return 0;
  }
  strftime(offset, sizeof offset, "%z", &local);
  strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &local);
  printf("{\"ok\":true,\"value\":{\"utc_offset\":\"%s\",\"local_time\":\"%s\",\"envelope_bytes\":%zu}}\n", offset, stamp, total);
  return 0;
}
