// SPDX-License-Identifier: MIT
/*
 * pmem_abi_print.c - print what a libpmem.h promises, for check_pmem_abi.sh.
 *
 * Built twice: once against PMDK's /usr/include/libpmem.h and once against
 * ntmem's compat/libpmem/include/libpmem.h, both linked with ntmem's
 * libpmem.so.1. The script compares the two outputs, so the headers must
 * agree on the value and the type of every flag and version constant (one
 * missing prints as "undefined", so the difference names it). Each function
 * is assigned to a pointer of PMDK's exact prototype: a missing declaration
 * or a different signature does not compile (-Werror), and a missing export
 * does not link.
 */
#include <stdio.h>
#include <sys/types.h>

#include <libpmem.h>

#define TYPE(x)                                                          \
	_Generic((x), int: "int", unsigned: "unsigned", long: "long",    \
		 unsigned long: "unsigned long", long long: "long long",   \
		 unsigned long long: "unsigned long long", default: "?")
#define CONST(name) \
	printf("%s %lld %s\n", #name, (long long)(name), TYPE(name))
#define UNDEF(name) printf("%s undefined\n", #name)
#define FUNC(name, type)                                                  \
	do {                                                              \
		__typeof__(type) fp = name;                               \
		printf("%s %s\n", #name, fp ? "declared" : "NULL");       \
	} while (0)

int main(void)
{
#ifdef PMEM_FILE_CREATE
	CONST(PMEM_FILE_CREATE);
#else
	UNDEF(PMEM_FILE_CREATE);
#endif
#ifdef PMEM_FILE_EXCL
	CONST(PMEM_FILE_EXCL);
#else
	UNDEF(PMEM_FILE_EXCL);
#endif
#ifdef PMEM_FILE_SPARSE
	CONST(PMEM_FILE_SPARSE);
#else
	UNDEF(PMEM_FILE_SPARSE);
#endif
#ifdef PMEM_FILE_TMPFILE
	CONST(PMEM_FILE_TMPFILE);
#else
	UNDEF(PMEM_FILE_TMPFILE);
#endif
#ifdef PMEM_F_MEM_NODRAIN
	CONST(PMEM_F_MEM_NODRAIN);
#else
	UNDEF(PMEM_F_MEM_NODRAIN);
#endif
#ifdef PMEM_F_MEM_NONTEMPORAL
	CONST(PMEM_F_MEM_NONTEMPORAL);
#else
	UNDEF(PMEM_F_MEM_NONTEMPORAL);
#endif
#ifdef PMEM_F_MEM_TEMPORAL
	CONST(PMEM_F_MEM_TEMPORAL);
#else
	UNDEF(PMEM_F_MEM_TEMPORAL);
#endif
#ifdef PMEM_F_MEM_WC
	CONST(PMEM_F_MEM_WC);
#else
	UNDEF(PMEM_F_MEM_WC);
#endif
#ifdef PMEM_F_MEM_WB
	CONST(PMEM_F_MEM_WB);
#else
	UNDEF(PMEM_F_MEM_WB);
#endif
#ifdef PMEM_F_MEM_NOFLUSH
	CONST(PMEM_F_MEM_NOFLUSH);
#else
	UNDEF(PMEM_F_MEM_NOFLUSH);
#endif
#ifdef PMEM_F_MEM_VALID_FLAGS
	CONST(PMEM_F_MEM_VALID_FLAGS);
#else
	UNDEF(PMEM_F_MEM_VALID_FLAGS);
#endif
#ifdef PMEM_MAJOR_VERSION
	CONST(PMEM_MAJOR_VERSION);
#else
	UNDEF(PMEM_MAJOR_VERSION);
#endif
#ifdef PMEM_MINOR_VERSION
	CONST(PMEM_MINOR_VERSION);
#else
	UNDEF(PMEM_MINOR_VERSION);
#endif
#ifdef PMEM_MIN_PART
	CONST(PMEM_MIN_PART);
#else
	UNDEF(PMEM_MIN_PART);
#endif

	FUNC(pmem_map_file, void *(*)(const char *, size_t, int, mode_t,
				      size_t *, int *));
	FUNC(pmem_unmap, int (*)(void *, size_t));
	FUNC(pmem_is_pmem, int (*)(const void *, size_t));
	FUNC(pmem_flush, void (*)(const void *, size_t));
	FUNC(pmem_drain, void (*)(void));
	FUNC(pmem_persist, void (*)(const void *, size_t));
	FUNC(pmem_msync, int (*)(const void *, size_t));
	FUNC(pmem_has_hw_drain, int (*)(void));
	FUNC(pmem_has_auto_flush, int (*)(void));
	FUNC(pmem_deep_flush, void (*)(const void *, size_t));
	FUNC(pmem_deep_drain, int (*)(const void *, size_t));
	FUNC(pmem_deep_persist, int (*)(const void *, size_t));
	FUNC(pmem_memcpy, void *(*)(void *, const void *, size_t, unsigned));
	FUNC(pmem_memmove, void *(*)(void *, const void *, size_t, unsigned));
	FUNC(pmem_memset, void *(*)(void *, int, size_t, unsigned));
	FUNC(pmem_memcpy_nodrain, void *(*)(void *, const void *, size_t));
	FUNC(pmem_memcpy_persist, void *(*)(void *, const void *, size_t));
	FUNC(pmem_memmove_nodrain, void *(*)(void *, const void *, size_t));
	FUNC(pmem_memmove_persist, void *(*)(void *, const void *, size_t));
	FUNC(pmem_memset_nodrain, void *(*)(void *, int, size_t));
	FUNC(pmem_memset_persist, void *(*)(void *, int, size_t));
	FUNC(pmem_check_version, const char *(*)(unsigned, unsigned));
	FUNC(pmem_errormsg, const char *(*)(void));
	return 0;
}
