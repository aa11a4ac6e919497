/* SPDX-License-Identifier: MIT */
/*
 * libminiasync/vdm.h - a test-only stand-in for libminiasync's virtual
 * data mover header: struct vdm and its operations' layouts, as PMDK
 * 1.12.1's libpmem2.so.1 uses them on x86-64 (see future.h).
 */
#ifndef VDM_H
#define VDM_H 1

#include "future.h"

struct vdm;

enum vdm_operation_type {
	VDM_OPERATION_MEMCPY,
	VDM_OPERATION_MEMMOVE,
	VDM_OPERATION_MEMSET,
	VDM_OPERATION_FLUSH,
};

enum vdm_operation_result {
	VDM_SUCCESS,
	VDM_ERROR_OUT_OF_MEMORY,
	VDM_ERROR_JOB_CORRUPTED,
};

#define VDM_F_MEM_DURABLE	(1U << 0)
#define VDM_F_NO_CACHE_HINT	(1U << 1)

struct vdm_operation_data_memcpy {
	void *dest;
	void *src;
	size_t n;
	uint64_t flags;
};

struct vdm_operation_data_memset {
	void *str;
	int c;
	size_t n;
	uint64_t flags;
};

struct vdm_operation {
	union {
		struct vdm_operation_data_memcpy memcpy;
		struct vdm_operation_data_memcpy memmove;
		struct vdm_operation_data_memset memset;
		uint8_t data[40];
	} data;
	enum vdm_operation_type type;
	uint32_t padding;
};

struct vdm_operation_data {
	void *data;		/* the mover's handle (op_new) */
	struct vdm *vdm;
	struct vdm_operation operation;
};

struct vdm_operation_output {
	enum vdm_operation_type type;
	enum vdm_operation_result result;
	union {
		struct { void *dest; } memcpy;
		struct { void *dest; } memmove;
		struct { void *str; } memset;
	} output;
};

FUTURE(vdm_operation_future, struct vdm_operation_data,
       struct vdm_operation_output);

struct vdm {
	void *(*op_new)(struct vdm *vdm, const enum vdm_operation_type type);
	void (*op_delete)(void *data, const struct vdm_operation *operation,
			  struct vdm_operation_output *output);
	int (*op_start)(void *data, const struct vdm_operation *operation,
			struct future_notifier *n);
	enum future_state (*op_check)(void *data,
				      const struct vdm_operation *operation);
	unsigned capabilities;
	future_has_property_fn has_property;
};

#endif /* VDM_H */
