/*
 * live_list.h - the primitives alive in a context, so that destroying the
 * context can release what they still hold (sdpa.h, "Lifetime").
 *
 * A context owns a list; each primitive embeds a link, joins the list when
 * it is created and leaves it when it is destroyed. context_destroy hands
 * every primitive still in the list to a callback that releases its device
 * objects and marks it orphaned; the primitive itself stays allocated until
 * primitive_destroy. The list has its own lock: a context's primitives may
 * be created and destroyed from several threads. Destroying a context while
 * another thread uses one of its primitives is the caller's error (sdpa.h).
 */
#ifndef SDPA_CORE_LIVE_LIST_H
#define SDPA_CORE_LIVE_LIST_H

#include <pthread.h>
#include <stddef.h>

typedef struct sdpa_live_link {
    struct sdpa_live_link *prev, *next;
} sdpa_live_link_t;

typedef struct sdpa_live_list {
    pthread_mutex_t lock;
    sdpa_live_link_t head; /* a ring through head; empty: head.next == &head */
} sdpa_live_list_t;

/* The struct of type `type` whose member `member` is the link at link. */
#define SDPA_LIVE_OWNER(link, type, member)                                                        \
    ((type *)(void *)((char *)(link)-offsetof(type, member)))

/* An empty list. */
void sdpa_live_list_init(sdpa_live_list_t *list);

/* Adds link (not in any list) to list. */
void sdpa_live_list_add(sdpa_live_list_t *list, sdpa_live_link_t *link);

/* Takes link out of list (it must be in it). */
void sdpa_live_list_remove(sdpa_live_list_t *list, sdpa_live_link_t *link);

/* Takes every link out of list, calling orphan(link, user) for each in the
 * order they were added, and destroys the list's lock; the list may not be
 * used afterwards. Returns how many links there were. */
size_t sdpa_live_list_drain(sdpa_live_list_t *list,
                            void (*orphan)(sdpa_live_link_t *link, void *user), void *user);

#endif /* SDPA_CORE_LIVE_LIST_H */
