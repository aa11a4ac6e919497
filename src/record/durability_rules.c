// SPDX-License-Identifier: MIT
/*
 * durability_rules.c - the storage of the one thread identity of
 * durability_rules.h.
 */
#include "durability_rules.h"

__thread uint32_t ntm_thread_self __attribute__((tls_model("initial-exec")));
uint32_t ntm_thread_next = 1;
