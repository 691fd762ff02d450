/* compare_load_text: the terminal table of the load section of a comparison
 * (compare_load(), docs/compare.md#load-results), in the style of compare's stage table. */
#ifndef MLBENCH_CLI_COMPARE_LOAD_TEXT_H
#define MLBENCH_CLI_COMPARE_LOAD_TEXT_H

#include <stdio.h>

#include <jansson.h>

/* Writes the table of load (a candidate's "load" object; nothing for null) to out, then why
 * each unreliable verdict is unreliable. ci_level is the interval's coverage (0.95). Text
 * from the documents is written as is: the caller cleans it for the terminal. */
void compare_load_print(FILE *out, const json_t *load, double ci_level);

#endif
