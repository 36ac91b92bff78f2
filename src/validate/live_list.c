/* live_list.c - a locked ring of links. */
#include "live_list.h"

void sdpa_live_list_init(sdpa_live_list_t *list)
{
    pthread_mutex_init(&list->lock, NULL);
    list->head.prev = list->head.next = &list->head;
}

void sdpa_live_list_add(sdpa_live_list_t *list, sdpa_live_link_t *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev = list->head.prev;
    link->next = &list->head;
    list->head.prev->next = link;
    list->head.prev = link;
    pthread_mutex_unlock(&list->lock);
}

void sdpa_live_list_remove(sdpa_live_list_t *list, sdpa_live_link_t *link)
{
    pthread_mutex_lock(&list->lock);
    link->prev->next = link->next;
    link->next->prev = link->prev;
    link->prev = link->next = NULL;
    pthread_mutex_unlock(&list->lock);
}

size_t sdpa_live_list_drain(sdpa_live_list_t *list,
                            void (*orphan)(sdpa_live_link_t *link, void *user), void *user)
{
    size_t count = 0;
    pthread_mutex_lock(&list->lock);
    while (list->head.next != &list->head) {
        sdpa_live_link_t *link = list->head.next;
        link->prev->next = link->next;
        link->next->prev = link->prev;
        link->prev = link->next = NULL;
        orphan(link, user);
        count++;
    }
    pthread_mutex_unlock(&list->lock);
    pthread_mutex_destroy(&list->lock);
    return count;
}
