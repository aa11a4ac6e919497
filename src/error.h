/* SPDX-License-Identifier: MIT */
/*
 * error.h - how a library function fails: a negative errno, and the
 * message ntm_errmsg() returns (src/error.c). Never installed.
 */
#ifndef NTMEM_ERROR_H
#define NTMEM_ERROR_H

/*
 * Record the message for ntm_errmsg() (printf-style; strerror(-err) is
 * appended) and return @err, a negative errno: return ntm_error(...);
 */
int ntm_error(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* NTMEM_ERROR_H */
