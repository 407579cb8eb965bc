/* A function that tests/plugin/programs/block_tasks.c declares as a task inside a function:
 * this file has no pragma and is compiled on its own. */
void add_block(const int *src, int *dst, int n);

void add_block(const int *src, int *dst, int n) {
  for (int i = 0; i < n; ++i) dst[i] += src[i];
}
