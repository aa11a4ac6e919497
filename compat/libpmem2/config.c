// SPDX-License-Identifier: MIT
/*
 * config.c - pmem2_config_*(): how a source is to be mapped. Setters
 * check only what can be checked without the source (its alignment and
 * size are pmem2_map_new()'s to check), with PMDK's codes; a failed
 * setter leaves the config as it was.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "pmem2.h"

#define PROT_FLAGS (PMEM2_PROT_EXEC | PMEM2_PROT_READ | PMEM2_PROT_WRITE)

int pmem2_config_new(struct pmem2_config **cfg)
{
	struct pmem2_config *c = malloc(sizeof(*c));

	if (!c) {
		*cfg = NULL;
		return pmem2_err_errno(ENOMEM, "pmem2_config_new");
	}
	*c = (struct pmem2_config){
		.granularity = PMEM2_GRANULARITY_UNSET,
		.sharing = PMEM2_SHARED,
		.prot = PMEM2_PROT_READ | PMEM2_PROT_WRITE,
	};
	*cfg = c;
	return 0;
}

int pmem2_config_delete(struct pmem2_config **cfg)
{
	free(*cfg);
	*cfg = NULL;
	return 0;
}

int pmem2_config_set_required_store_granularity(struct pmem2_config *cfg,
						enum pmem2_granularity g)
{
	if (!pmem2_granularity_valid((int)g))
		return pmem2_err(PMEM2_E_GRANULARITY_NOT_SUPPORTED,
				 "pmem2_config_set_required_store_granularity: "
				 "granularity %d is not BYTE, CACHE_LINE or PAGE",
				 (int)g);
	cfg->granularity = g;
	return 0;
}

int pmem2_config_set_offset(struct pmem2_config *cfg, size_t offset)
{
	/* mmap() takes an off_t. */
	if (offset > (size_t)INT64_MAX)
		return pmem2_err(PMEM2_E_OFFSET_OUT_OF_RANGE,
				 "pmem2_config_set_offset: offset %zu is "
				 "greater than INT64_MAX", offset);
	cfg->offset = offset;
	return 0;
}

int pmem2_config_set_length(struct pmem2_config *cfg, size_t length)
{
	cfg->length = length;
	return 0;
}

int pmem2_config_set_sharing(struct pmem2_config *cfg,
			     enum pmem2_sharing_type type)
{
	if (type != PMEM2_SHARED && type != PMEM2_PRIVATE)
		return pmem2_err(PMEM2_E_INVALID_SHARING_VALUE,
				 "pmem2_config_set_sharing: type %d is neither "
				 "PMEM2_SHARED nor PMEM2_PRIVATE", (int)type);
	cfg->sharing = type;
	return 0;
}

int pmem2_config_set_protection(struct pmem2_config *cfg, unsigned prot)
{
	if (prot & ~PROT_FLAGS)
		return pmem2_err(PMEM2_E_INVALID_PROT_FLAG,
				 "pmem2_config_set_protection: prot 0x%x has "
				 "bits other than PMEM2_PROT_EXEC, _READ and "
				 "_WRITE", prot);
	cfg->prot = prot;
	return 0;
}

/*
 * Map into @rsv at @offset (NULL: anywhere). Always 0, as PMDK's: the
 * offset is pmem2_map_new()'s to check against the reservation.
 */
int pmem2_config_set_vm_reservation(struct pmem2_config *cfg,
				    struct pmem2_vm_reservation *rsv,
				    size_t offset)
{
	cfg->rsv = rsv;
	cfg->rsv_offset = offset;
	return 0;
}

/* The maps made with @cfg copy through @vdm (NULL: each map's own mover). */
int pmem2_config_set_vdm(struct pmem2_config *cfg, struct vdm *vdm)
{
	cfg->vdm = vdm;
	return 0;
}
