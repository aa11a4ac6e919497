/* SPDX-License-Identifier: MIT */
/*
 * report.h - one result table, printed as an aligned text table (default),
 * JSON (--json) or CSV (--csv). Every command that prints measurements
 * goes through it, so all of them speak the same three formats.
 */
#ifndef NTMEM_TOOL_REPORT_H
#define NTMEM_TOOL_REPORT_H

#include <stdio.h>

enum report_format { REPORT_TABLE, REPORT_JSON, REPORT_CSV };

enum col_type {
	COL_STR,	/* text */
	COL_INT,	/* integer, printed as is */
	COL_REAL,	/* floating point; 'prec' digits after the point */
};

struct report_col {
	const char *name;
	enum col_type type;
	int prec;	/* COL_REAL: digits after the decimal point */
};

union report_cell {
	const char *s;
	long long i;
	double r;	/* NaN prints as "-" (table), null (JSON), empty (CSV) */
};

#define REPORT_MAX_COLS 16
#define REPORT_MAX_META 24

struct report {
	enum report_format format;
	FILE *out;
	const char *title;
	const struct report_col *cols;
	int ncols;
	int rows;
	/* meta: key/value lines printed before the rows (a header comment) */
	int nmeta;
	const char *meta_key[REPORT_MAX_META];
	char meta_val[REPORT_MAX_META][160];
	/* table mode buffers rows to size the columns */
	char **cells;
	int cap;
};

void report_init(struct report *r, enum report_format format,
		 const char *title, const struct report_col *cols, int ncols);
void report_meta(struct report *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void report_row(struct report *r, const union report_cell *cells);
/* Prints what is buffered and the closing lines; frees the buffers. */
void report_end(struct report *r);
/* @s as a JSON string, quoted and escaped. */
void report_json_string(FILE *out, const char *s);

#endif
