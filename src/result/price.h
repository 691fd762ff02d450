/* price: what one hour of the machine costs, as the user gave it (`mlbench run --price` or
 * `--price-file`; docs/cost.md): parsing a price ("3.5", "3.5USD", "2.1 EUR"), loading a price
 * file (YAML: machine names to prices per hour, with `currency:` and `default:`), and matching
 * a file's entries against the names of the machine a result ran on. Prices are never
 * fetched from anywhere. Pure apart from reading the price file; thread-safe on distinct data. */
#ifndef MLBENCH_PRICE_H
#define MLBENCH_PRICE_H

#include <stdbool.h>
#include <stddef.h>

#include "result/machine_facts.h"

#define PRICE_DEFAULT_CURRENCY "USD"
#define PRICE_MAX_PER_HOUR 1e9        /* more per hour is a typo */
#define PRICE_FILE_MAX_BYTES (1 << 20) /* a price file is a short list */

struct price_entry {
    char *name;          /* a machine name as the file gives it */
    double per_hour;
};

/* A --price or a loaded --price-file. */
struct price_spec {
    char currency[4];            /* ISO 4217 style code, upper case: "USD" */
    double per_hour;             /* --price; 0 with a file */
    char *file;                  /* the --price-file path, or NULL for --price */
    struct price_entry *entries; /* the file's machines, in file order */
    size_t n_entries;
    double default_per_hour;     /* the file's `default:`, 0 when it has none */
};

/* The price a result gets: from --price, or the file entry that matched its machine. */
struct price_match {
    bool priced;                 /* false: no price (nothing matched, no default) */
    double per_hour;
    char currency[4];
    char source[64];             /* "--price" or "--price-file" */
    char *file;                  /* the price file, or NULL; owned */
    char *entry;                 /* the file's entry that matched ("default" too), or NULL */
    char *field;                 /* the environment field it matched ("gpus[0].name"), or NULL */
    char *value;                 /* that field's value, or NULL */
    const char *rule;            /* "exact", "substring", "default", or NULL */
};

/* Parses a price per hour: a finite number > 0 and at most PRICE_MAX_PER_HOUR, optionally
 * followed (after spaces or not) by a three-letter currency code ("3.50", "3.5USD",
 * "2.1 eur"; the code is kept upper case; PRICE_DEFAULT_CURRENCY when none). Hexadecimal,
 * "nan" and "inf" are refused. Returns 0 with *per_hour and currency[4] set, or -1 with a
 * message in err naming the value. */
int price_parse(const char *text, double *per_hour, char currency[4], char *err, size_t errlen);

/* Parses a currency code: three ASCII letters, any case, stored upper case in out[4].
 * Returns 0, or -1 when text is not one. */
int price_parse_currency(const char *text, char out[4]);

/* Sets spec up for `--price text`. Returns 0, or -1 with a message in err (the caller frees
 * spec with price_spec_free in both cases). */
int price_spec_from_price(struct price_spec *spec, const char *text, char *err, size_t errlen);

/* Loads a price file (YAML) into spec: a mapping whose keys are machine names and whose values
 * are prices per hour (numbers > 0), plus the optional keys `currency` (a code, default USD)
 * and `default` (the price when no name matches). name is how messages call the file (the
 * path); text[0..len) its contents. Returns 0, or -1 with a message in err naming the file, the
 * line and the bad value (spec is then to be freed with price_spec_free). */
int price_spec_parse_file_text(struct price_spec *spec, const char *name, const char *text,
                               size_t len, char *err, size_t errlen);
/* Reads path and parses it as price_spec_parse_file_text does. */
int price_spec_load_file(struct price_spec *spec, const char *path, char *err, size_t errlen);

/* Frees what spec owns (spec itself is the caller's) and zeroes it. */
void price_spec_free(struct price_spec *spec);

/* Which price applies to the machine of facts (as envinfo_capture fills them; NULL or any
 * fact unknown: not a name). With --price, that price. With a file, the machine's
 * descriptions are its host name (`hostname`), its GPU names (`gpus[i].name`), its CPU model
 * (`cpu.model`) and its virtual machine (`virtualization.vm`), named by the environment fields
 * that record them, and the rule is: an entry equal to one of them (file order; descriptions in
 * that order), else the longest entry that is a case-insensitive substring of one (the first
 * such in the file on a tie), else `default`, else no price (out->priced false). Fills *out
 * (free it with price_match_free). */
void price_match(const struct price_spec *spec, const struct machine_facts *facts,
                 struct price_match *out);
void price_match_free(struct price_match *m);

#endif
