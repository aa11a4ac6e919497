// SPDX-License-Identifier: MIT
/*
 * check_verdict.c - what a run's report says of it: whether it was
 * checked (all, part, none) and how PROGRAM ended, as the text and the
 * --json report say them and the exit status follows.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "check_run.h"

const char *const checked_names[] = {
	[CHECKED_ALL] = "all", [CHECKED_PART] = "part", [CHECKED_NONE] = "none",
};

enum checked run_checked(const struct run_report *rr, char *why, size_t len)
{
	*why = '\0';
	if (!rr->watching && rr->unchecked) {
		snprintf(why, len, "the checking library could not watch "
			 "anything (see the note%s)", rr->unchecked == 1 ? "" : "s");
		return CHECKED_NONE;
	}
	if (!rr->watching) {
		snprintf(why, len, "no process loaded the checking library");
		return CHECKED_NONE;
	}
	if (!rr->unwatched && !rr->unchecked)
		return CHECKED_ALL;
	if (rr->unwatched && rr->unchecked)
		snprintf(why, len, "%d part%s of mappings not watched, %d "
			 "process%s not watched", rr->unwatched,
			 rr->unwatched == 1 ? "" : "s", rr->unchecked,
			 rr->unchecked == 1 ? "" : "es");
	else if (rr->unwatched)
		snprintf(why, len, "%d part%s of mappings not watched",
			 rr->unwatched, rr->unwatched == 1 ? "" : "s");
	else
		snprintf(why, len, "%d process%s not watched", rr->unchecked,
			 rr->unchecked == 1 ? "" : "es");
	return CHECKED_PART;
}

void describe_end(char *buf, size_t len, int status,
		  const struct run_report *rr, long long child, bool *judged)
{
	const struct record *end = NULL;
	char sig[32];

	for (int i = 0; i < rr->n; i++)
		if (rr->rec[i].type == REC_END && rr->rec[i].pid == child)
			end = &rr->rec[i];
	*judged = end && end->judged;
	if (WIFEXITED(status)) {
		snprintf(buf, len, "exited %d%s", WEXITSTATUS(status),
			 end && end->how_id == HOW_UNDERSCORE_EXIT ? " via _exit"
								   : "");
		return;
	}
	if (sigabbrev_np(WTERMSIG(status)))
		snprintf(sig, sizeof(sig), "SIG%s", sigabbrev_np(WTERMSIG(status)));
	else
		snprintf(sig, sizeof(sig), "signal %d", WTERMSIG(status));
	snprintf(buf, len, "killed by %s%s%s", sig,
		 WCOREDUMP(status) ? " (core dumped)" : "",
		 *judged ? "" : end ? ", not judged: the signal came while the "
				      "checker held its lock"
			      : ", not judged: what it left is not known");
}

