/* The C test programs' one check: counts it, and prints the condition and line of a failure.
 * A program ends with printf("%d passed, %d failed\n", passed, failed). */
#ifndef CURLXHR_TEST_CHECK_H
#define CURLXHR_TEST_CHECK_H
#include <stdio.h>

static int passed, failed;

#define CHECK(cond)                                                   \
  do {                                                                \
    if(cond)                                                          \
      passed++;                                                       \
    else {                                                            \
      failed++;                                                       \
      printf("FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);         \
    }                                                                 \
  } while(0)

#endif
