/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A process that deadlocks at once and for good, for the tests of the
 * threads already off the CPU when sampling starts: two threads take two
 * mutexes in opposite orders, a barrier making sure each holds its first
 * before asking for the second.  Prints "deadlocked" once both wait.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

__attribute__((noinline)) static void take_in_order(pthread_mutex_t *a, pthread_mutex_t *b)
{
	pthread_mutex_lock(a);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(b);
	pthread_mutex_unlock(b);
	pthread_mutex_unlock(a);
}

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	take_in_order(&second, &first);
	return NULL;
}

int main(void)
{
	pthread_t t;

	pthread_barrier_init(&both_hold, NULL, 2);
	if (pthread_create(&t, NULL, worker, NULL))
		return 1;
	puts("deadlocked");
	fflush(stdout);
	take_in_order(&first, &second);
	pthread_join(t, NULL);
	return 0;
}
