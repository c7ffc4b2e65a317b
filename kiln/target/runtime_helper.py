"""The runtime helper every kiln library links: the C source of what generated code calls besides libm.

* The last-error slot: ``KilnAPISetLastError`` (generated code, on a failed check), ``KilnGetLastError`` (read by the
  Python runtime after a function returned a non-zero status).
* Aligned workspace allocation: ``kiln_alloc`` / ``kiln_free``.
* The parallel launcher ``kiln_parallel_launch(fn, closure, num_threads)``, which the LLVM backend's outlined parallel
  loops call: the launcher chooses a task count ``n`` and ``fn(task, n, closure)`` runs the ``task``-th static chunk
  of the loop; every task runs once. ``num_threads`` (the target's ``-num-cores``, 0 when not given) caps the threads
  used.

The launcher runs tasks on a thread pool built for machines that are busy with other work:

* the calling thread works too: it publishes the job, then claims tasks like the workers; a task is claimed with one
  atomic increment of a ticket holding the job's number and the next task index, so a worker that wakes late claims
  from whatever job is current (or finds it finished) and never delays anyone;
* the caller waits only for tasks already claimed and running, never for a worker that has not woken up: on a machine
  whose other cores are busy, a kernel finishes on the cores it gets instead of waiting a scheduler tick for a
  descheduled thread at a barrier (what an OpenMP parallel region does);
* a launch is split into more tasks than threads (:data:`TASKS_PER_THREAD`), so uneven progress evens out;
* the task count travels in the ticket with the task index, so a claim made too late finds no task instead of
  running one of the next job;
* idle workers spin briefly (kernels of a graph follow each other within microseconds), then sleep on a condition
  variable until the next job;
* a launch from inside a task (a nested parallel loop), or from a second thread while the pool is busy, runs its
  tasks inline on the calling thread.

Every library links its own copy with hidden symbols (libraries never bind to each other's); the Python runtime
makes them share one pool per process (:class:`kiln.runtime.library.SharedLibrary`: each library's
``kiln_thread_pool`` hands out its pool, ``kiln_use_thread_pool`` adopts another's), so a process holding many
libraries keeps one set of worker threads; a task's error message is read from the library whose code failed. Worker
count: ``KILN_NUM_THREADS``, else the first launch's ``num_threads``, else the CPUs this process may run on.
"""

TASKS_PER_THREAD = 4
"""Tasks a launch is split into per thread, when the generated code leaves the count to the launcher."""

RUNTIME_SOURCE = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <immintrin.h>
#define KILN_HIDDEN __attribute__((visibility("hidden")))
#define KILN_TASKS_PER_THREAD @TASKS_PER_THREAD@
#define KILN_SPIN_SECONDS 1e-4  /* how long an idle worker spins before sleeping */

static __thread const char* kiln_last_error = "";

KILN_HIDDEN void KilnAPISetLastError(const char* msg) { kiln_last_error = msg; }

/* read by the Python runtime after a function returned a non-zero code */
const char* KilnGetLastError(void) { return kiln_last_error; }

KILN_HIDDEN void* kiln_alloc(int64_t nbytes) {
  size_t n = (size_t)(nbytes <= 0 ? 64 : nbytes);
  n = (n + 63) & ~(size_t)63;
  return aligned_alloc(64, n);
}

KILN_HIDDEN void kiln_free(void* ptr) { free(ptr); }

typedef int32_t (*kiln_task_fn)(int32_t task_id, int32_t num_tasks, void* closure);
typedef const char* (*kiln_error_fn)(void);

typedef struct kiln_pool kiln_pool;
typedef int32_t (*kiln_launch_fn)(kiln_pool* pool, kiln_task_fn fn, void* closure, int32_t num_threads,
                                  kiln_error_fn error);

/* The ticket packs the job number (16 bits), its task count (16 bits) and the next task index (32 bits): one atomic
   increment claims a task and tells whether it exists, so a late worker can never run a task of a finished job. */
#define KILN_JOB(t) ((t) >> 48)
#define KILN_TASKS(t) ((int32_t)(((t) >> 32) & 0xffff))
#define KILN_NEXT(t) ((int32_t)((t) & 0xffffffffu))

struct kiln_pool {
  kiln_launch_fn launch;          /* the launcher of the library that made the pool (adopters call through it) */
  pthread_mutex_t busy;           /* held by the thread running a job; others run theirs inline */
  pthread_mutex_t sleep_lock;
  pthread_cond_t wake;
  int sleeping;
  int num_workers;
  _Atomic uint64_t ticket;
  _Atomic int32_t done;           /* tasks of the current job finished */
  _Atomic int32_t error;          /* first non-zero status of the current job */
  const char* _Atomic message;
  kiln_task_fn fn;                /* the current job, written before its ticket is published */
  void* closure;
  kiln_error_fn error_of;         /* reads the error slot of the library whose code the job runs */
};

static __thread int kiln_in_task = 0;

static int32_t kiln_run_inline(kiln_task_fn fn, void* closure, int32_t num_tasks) {
  for (int32_t t = 0; t < num_tasks; ++t) {
    int32_t code = fn(t, num_tasks, closure);
    if (code != 0) return code;
  }
  return 0;
}

/* Claim and run tasks of the current job until none is left. */
static void kiln_work(kiln_pool* pool) {
  for (;;) {
    uint64_t claim = atomic_fetch_add_explicit(&pool->ticket, 1, memory_order_acq_rel);
    int32_t tasks = KILN_TASKS(claim);
    if (KILN_NEXT(claim) >= tasks) return;
    kiln_in_task = 1;
    int32_t code = pool->fn(KILN_NEXT(claim), tasks, pool->closure);
    kiln_in_task = 0;
    if (code != 0) {
      int32_t none = 0;
      if (atomic_compare_exchange_strong(&pool->error, &none, code)) atomic_store(&pool->message, pool->error_of());
    }
    atomic_fetch_add_explicit(&pool->done, 1, memory_order_release);
  }
}

static double kiln_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void* kiln_worker(void* arg) {
  kiln_pool* pool = (kiln_pool*)arg;
  uint64_t seen = KILN_JOB(atomic_load(&pool->ticket));
  for (;;) {
    double until = kiln_now() + KILN_SPIN_SECONDS;
    for (int k = 1; KILN_JOB(atomic_load_explicit(&pool->ticket, memory_order_acquire)) == seen; ++k) {
      _mm_pause();
      if ((k & 63) == 0 && kiln_now() > until) break;
    }
    if (KILN_JOB(atomic_load(&pool->ticket)) == seen) {
      pthread_mutex_lock(&pool->sleep_lock);
      pool->sleeping++;
      while (KILN_JOB(atomic_load(&pool->ticket)) == seen) pthread_cond_wait(&pool->wake, &pool->sleep_lock);
      pool->sleeping--;
      pthread_mutex_unlock(&pool->sleep_lock);
    }
    seen = KILN_JOB(atomic_load(&pool->ticket));
    kiln_work(pool);
  }
  return NULL;
}

static int kiln_default_threads(int32_t hint) {
  const char* env = getenv("KILN_NUM_THREADS");
  if (env != NULL && atoi(env) > 0) return atoi(env);
  if (hint > 0) return hint;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)n : 1;
}

static int32_t kiln_pool_launch(kiln_pool* pool, kiln_task_fn fn, void* closure, int32_t num_threads,
                                kiln_error_fn error_of) {
  int32_t threads = pool->num_workers + 1;
  if (num_threads > 0 && num_threads < threads) threads = num_threads;
  int32_t num_tasks = threads * KILN_TASKS_PER_THREAD;
  if (threads == 1 || kiln_in_task || pthread_mutex_trylock(&pool->busy) != 0)
    return kiln_run_inline(fn, closure, threads == 1 ? 1 : num_tasks);
  pool->fn = fn;
  pool->closure = closure;
  pool->error_of = error_of;
  atomic_store(&pool->done, 0);
  atomic_store(&pool->error, 0);
  uint64_t job = (KILN_JOB(atomic_load(&pool->ticket)) + 1) & 0xffff;
  atomic_store_explicit(&pool->ticket, job << 48 | (uint64_t)num_tasks << 32, memory_order_release);
  pthread_mutex_lock(&pool->sleep_lock);
  if (pool->sleeping > 0) pthread_cond_broadcast(&pool->wake);
  pthread_mutex_unlock(&pool->sleep_lock);
  kiln_work(pool);
  while (atomic_load_explicit(&pool->done, memory_order_acquire) < num_tasks) _mm_pause();  /* claimed, running */
  int32_t code = atomic_load(&pool->error);
  pthread_mutex_unlock(&pool->busy);
  return code;
}

static kiln_pool* kiln_the_pool = NULL;
static pthread_once_t kiln_pool_once = PTHREAD_ONCE_INIT;
static int32_t kiln_pool_hint = 0;

static void kiln_make_pool(void) {
  kiln_pool* pool = (kiln_pool*)calloc(1, sizeof(kiln_pool));
  pool->launch = kiln_pool_launch;
  pthread_mutex_init(&pool->busy, NULL);
  pthread_mutex_init(&pool->sleep_lock, NULL);
  pthread_cond_init(&pool->wake, NULL);
  int threads = kiln_default_threads(kiln_pool_hint);
  for (int i = 0; i + 1 < threads; ++i) {
    pthread_t thread;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&thread, &attr, kiln_worker, pool) == 0) pool->num_workers++;
    pthread_attr_destroy(&attr);
  }
  kiln_the_pool = pool;
}

/* This library's pool (created on first use), for the Python runtime to share with other libraries. */
void* kiln_thread_pool(void) {
  if (kiln_the_pool == NULL) pthread_once(&kiln_pool_once, kiln_make_pool);
  return kiln_the_pool;
}

/* Use another library's pool instead of making one (called before this library runs anything). */
void kiln_use_thread_pool(void* pool) {
  if (kiln_the_pool == NULL && pool != NULL) kiln_the_pool = (kiln_pool*)pool;
}

static const char* kiln_error_of_this_library(void) { return kiln_last_error; }

/* Run fn(t, n, closure) for every t in [0, n) on the pool, n chosen by the launcher, on at most num_threads threads
   (<= 0: all of the pool's); the first non-zero status wins and its message moves to the calling thread's error
   slot. */
KILN_HIDDEN int32_t kiln_parallel_launch(kiln_task_fn fn, void* closure, int32_t num_threads) {
  if (kiln_the_pool == NULL) {
    kiln_pool_hint = num_threads;
    kiln_thread_pool();
  }
  int32_t code = kiln_the_pool->launch(kiln_the_pool, fn, closure, num_threads, kiln_error_of_this_library);
  if (code != 0) kiln_last_error = atomic_load(&kiln_the_pool->message);
  return code;
}
""".replace("@TASKS_PER_THREAD@", str(TASKS_PER_THREAD))
