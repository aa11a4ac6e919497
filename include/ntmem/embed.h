/* SPDX-License-Identifier: MIT */
/*
 * ntmem/embed.h - for libraries that embed ntmem and offer an interface
 * of their own on top of it, such as ntmem's libpmem and libpmemblk
 * drop-ins (ntmem-libpmem(7), ntmem-libpmemblk(7)): they translate their
 * own environment into ntmem's ceilings, map files they opened themselves,
 * and answer their own callers about verbosity and persistence domains
 * with ntmem's rules. Applications need none of it: <ntmem.h> is their
 * API. Not included by <ntmem.h>; include it as <ntmem/embed.h>.
 */
#ifndef NTMEM_EMBED_H
#define NTMEM_EMBED_H

#include <stdbool.h>

#include <ntmem/ns.h>		/* struct ntm_ns, NTM_NS_*, enum ntm_persist_domain */
#include <ntmem/variant.h>	/* enum ntm_isa, enum ntm_flush_insn */

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ntm_dispatch_set_caps() - ceilings on the copy variant and the
 * write-back instruction, set before ntmem chooses them
 * @isa_cap:   an enum ntm_isa, or -1 for none
 * @flush_cap: an enum ntm_flush_insn, or -1 for none
 *
 * The choice is made once per process, at the first call that copies,
 * flushes or asks about the variant (ntm_variant_active(), ...); call this
 * before, from a constructor of the embedding library (the libpmem
 * drop-in turns PMEM_AVX=0, PMEM_NO_CLWB=1 and the like into ceilings).
 * The lower of each ceiling and NTMEM_ISA / NTMEM_FLUSH wins. A later call
 * before the choice replaces the ceilings of the earlier one.
 *
 * Return: 0; -EINVAL for a value that is neither -1 nor in its enum;
 * -EBUSY once the choice has been made (the ceilings are not applied).
 */
int ntm_dispatch_set_caps(int isa_cap, int flush_cap);

/**
 * ntm_ns_open_fd() - ntm_ns_open() on a descriptor the caller opened
 * @ns:    set to the new namespace on success
 * @fd:    a regular file or a devdax device, open O_RDWR (O_RDONLY with
 *         NTM_NS_READONLY); it stays the caller's, open or closed after
 *         the call as the caller likes (the namespace keeps no descriptor,
 *         except a duplicate for an unlinked file)
 * @path:  the name of the file, for ntm_errmsg() and ntm_ns_path(), and
 *         where state is kept beside it (ntm_blk_open()'s bad-sector list)
 * @flags: NTM_NS_READONLY, NTM_NS_EMULATE, NTM_NS_ANY_SIZE
 *
 * For a library that must open the file itself: to lock it (PMDK's pools
 * are flock()ed), to create it with its own mode, or to check what it is
 * by its own rules before mapping it.
 *
 * Return: as ntm_ns_open(), and -EBADF for a descriptor that is not open.
 */
int ntm_ns_open_fd(struct ntm_ns **ns, int fd, const char *path, unsigned flags);

/**
 * ntm_verbose() - whether NTMEM_VERBOSE asks for messages on stderr
 *
 * NTMEM_VERBOSE's one rule, the same in ntmem and in every library that
 * embeds it: 1, yes, true or on (any case) is on; 0, no, false, off, empty
 * or unset is off; any other value is off, and ntmem says so in one line
 * on stderr when it makes its choices. Does not make them: callable from
 * a constructor before ntm_dispatch_set_caps(). Once they are made, the
 * value read then (later changes to the environment are not seen).
 */
bool ntm_verbose(void);

/**
 * ntm_persist_domain_system() - the persistence domain of the machine's
 * persistent memory as a whole: what pmem_has_auto_flush() reports
 *
 * NTMEM_PERSIST_DOMAIN when it is set to a known value; else the weakest
 * domain of the nd regions in sysfs (/sys/bus/nd/devices/regionN/
 * persistence_domain), NTM_PERSIST_NONE when there are none. Read on each
 * call.
 *
 * Return: an enum ntm_persist_domain, or a negative errno when a region's
 * domain cannot be read and every region that can be is cpu_cache (one
 * weaker settles that lines must be written back, whatever the others are).
 */
int ntm_persist_domain_system(void);

#ifdef __cplusplus
}
#endif

#endif /* NTMEM_EMBED_H */
