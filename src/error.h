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

/*
 * A failure whose cause a callee (a caller-supplied callback, such as a
 * BTT's persist) may have recorded: ntm_error_clear() before the call;
 * after it, ntm_error_cause() records "what: the cause's message" when
 * the callee left one, else what ntm_error() would, and returns @err.
 */
void ntm_error_clear(void);
int ntm_error_cause(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* NTMEM_ERROR_H */
