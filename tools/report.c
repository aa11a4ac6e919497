// SPDX-License-Identifier: MIT
/*
 * report.c - table / JSON / CSV output for measurements.
 *
 * Text tables are buffered so every column is exactly as wide as its
 * widest cell; JSON and CSV stream row by row, so a long benchmark shows
 * its rows as soon as they are measured when piped into a file.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

void report_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\u%04x", *s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void format_cell(char *buf, size_t len, const struct report_col *c,
			const union report_cell *v, const char *nan_text)
{
	switch (c->type) {
	case COL_STR:
		snprintf(buf, len, "%s", v->s ? v->s : "");
		break;
	case COL_INT:
		snprintf(buf, len, "%lld", v->i);
		break;
	case COL_REAL:
		if (isnan(v->r))
			snprintf(buf, len, "%s", nan_text);
		else
			snprintf(buf, len, "%.*f", c->prec, v->r);
		break;
	}
}

void report_init(struct report *r, enum report_format format,
		 const char *title, const struct report_col *cols, int ncols)
{
	memset(r, 0, sizeof(*r));
	r->format = format;
	r->out = stdout;
	r->title = title;
	r->cols = cols;
	r->ncols = ncols < REPORT_MAX_COLS ? ncols : REPORT_MAX_COLS;
}

void report_meta(struct report *r, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (r->nmeta == REPORT_MAX_META)
		return;
	r->meta_key[r->nmeta] = key;
	va_start(ap, fmt);
	vsnprintf(r->meta_val[r->nmeta], sizeof(r->meta_val[0]), fmt, ap);
	va_end(ap);
	r->nmeta++;
}

static void print_header(struct report *r)
{
	FILE *out = r->out;

	switch (r->format) {
	case REPORT_JSON:
		fputs("{\n  \"title\": ", out);
		report_json_string(out, r->title);
		fputs(",\n  \"meta\": {", out);
		for (int i = 0; i < r->nmeta; i++) {
			fputs(i ? ",\n    " : "\n    ", out);
			report_json_string(out, r->meta_key[i]);
			fputs(": ", out);
			report_json_string(out, r->meta_val[i]);
		}
		fputs("\n  },\n  \"rows\": [", out);
		break;
	case REPORT_CSV:
		for (int i = 0; i < r->nmeta; i++)
			fprintf(out, "# %s: %s\n", r->meta_key[i], r->meta_val[i]);
		for (int i = 0; i < r->ncols; i++)
			fprintf(out, "%s%s", i ? "," : "", r->cols[i].name);
		fputc('\n', out);
		break;
	case REPORT_TABLE:
		fprintf(out, "%s\n", r->title);
		for (int i = 0; i < r->nmeta; i++)
			fprintf(out, "  %s: %s\n", r->meta_key[i], r->meta_val[i]);
		break;
	}
}

void report_row(struct report *r, const union report_cell *cells)
{
	char buf[256];

	if (r->rows == 0 && r->format != REPORT_TABLE)
		print_header(r);

	if (r->format == REPORT_TABLE) {
		if ((r->rows + 1) * r->ncols > r->cap) {
			int cap = r->cap ? r->cap * 2 : 64 * r->ncols;
			char **cells_new = realloc(r->cells, cap * sizeof(char *));

			if (!cells_new)
				return;
			r->cells = cells_new;
			r->cap = cap;
		}
		for (int i = 0; i < r->ncols; i++) {
			format_cell(buf, sizeof(buf), &r->cols[i], &cells[i], "-");
			r->cells[r->rows * r->ncols + i] = strdup(buf);
		}
		r->rows++;
		return;
	}

	if (r->format == REPORT_JSON) {
		fputs(r->rows ? ",\n    {" : "\n    {", r->out);
		for (int i = 0; i < r->ncols; i++) {
			fputs(i ? ", " : "", r->out);
			report_json_string(r->out, r->cols[i].name);
			fputs(": ", r->out);
			if (r->cols[i].type == COL_STR) {
				report_json_string(r->out, cells[i].s ? cells[i].s : "");
			} else {
				format_cell(buf, sizeof(buf), &r->cols[i],
					    &cells[i], "null");
				fputs(buf, r->out);
			}
		}
		fputc('}', r->out);
	} else {
		for (int i = 0; i < r->ncols; i++) {
			format_cell(buf, sizeof(buf), &r->cols[i], &cells[i], "");
			fprintf(r->out, "%s%s", i ? "," : "", buf);
		}
		fputc('\n', r->out);
	}
	fflush(r->out);
	r->rows++;
}

static void print_table(struct report *r)
{
	int width[REPORT_MAX_COLS];

	for (int c = 0; c < r->ncols; c++) {
		width[c] = (int)strlen(r->cols[c].name);
		for (int row = 0; row < r->rows; row++) {
			int w = (int)strlen(r->cells[row * r->ncols + c]);

			if (w > width[c])
				width[c] = w;
		}
	}
	/* Text left-aligned, numbers right-aligned. */
	for (int c = 0; c < r->ncols; c++)
		fprintf(r->out, "%s%*s", c ? "  " : "",
			r->cols[c].type == COL_STR ? -width[c] : width[c],
			r->cols[c].name);
	fputc('\n', r->out);
	for (int row = 0; row < r->rows; row++) {
		for (int c = 0; c < r->ncols; c++) {
			char *cell = r->cells[row * r->ncols + c];

			fprintf(r->out, "%s%*s", c ? "  " : "",
				r->cols[c].type == COL_STR ? -width[c] : width[c],
				cell);
			free(cell);
		}
		fputc('\n', r->out);
	}
}

void report_end(struct report *r)
{
	switch (r->format) {
	case REPORT_TABLE:
		print_header(r);
		print_table(r);
		break;
	case REPORT_JSON:
		if (r->rows == 0)
			print_header(r);
		fputs("\n  ]\n}\n", r->out);
		break;
	case REPORT_CSV:
		if (r->rows == 0)
			print_header(r);
		break;
	}
	fflush(r->out);
	free(r->cells);
	r->cells = NULL;
	r->cap = 0;
}
