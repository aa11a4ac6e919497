/* SPDX-License-Identifier: MIT */
/*
 * ntmem/mc.h - machine-check-safe reads.
 *
 * Reading persistent memory can hit poison (a media error the platform
 * reports as a machine check, delivered to user space as SIGBUS), and
 * reading a mapped file can hit a page the file no longer has (truncated
 * underneath: SIGBUS too). ntm_copy_mc() is the kernel's
 * copy_mc_to_kernel(): it returns how many bytes it could not copy
 * instead of killing the process.
 */
#ifndef NTMEM_MC_H
#define NTMEM_MC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ntm_copy_mc() - copy that survives SIGBUS on the source
 * @dst: destination (ordinary memory; a fault there is not recovered)
 * @src: source, e.g. a namespace mapping
 * @n:   bytes
 *
 * No system call and no sigsetjmp() on the way: a process-wide SIGBUS
 * handler, installed on the first call, moves a faulting copy to its
 * fixup (as the kernel's exception table does) and passes every other
 * SIGBUS on to the handler that was installed before it. A SIGBUS that is
 * not ntmem's gets exactly the action it would have had without ntmem:
 * the previous handler runs; under SIG_DFL the process dies of SIGBUS
 * (a signal sent with kill() is re-raised with the default action); under
 * SIG_IGN a sent one is ignored and ntmem's handler stays. Thread-safe.
 * Bytes of @dst past the first one not copied may have been written.
 *
 * Return: 0, or the number of bytes not copied, counted from the first
 * byte that could not be read to @src + @n.
 */
size_t ntm_copy_mc(void *dst, const void *src, size_t n);

/**
 * ntm_mc_install() - (re)install the SIGBUS handler, chaining to the one
 * in place now. ntm_copy_mc() installs it on its first call; a program
 * that sets its own SIGBUS handler after that calls this again.
 *
 * Return: 0 or -errno from sigaction().
 */
int ntm_mc_install(void);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_MC_H */
