/*
 * test_spirv_fuzz.c - the CPU driver's SPIR-V reader (spirv_reflect.c)
 * parses untrusted binaries: zeModuleCreate hands it whatever a program
 * passes. Two tests, no device needed:
 *
 * - mutated_modules: a seeded mutation fuzzer over the real SPIR-V that
 *   spirv/ builds (every variant), with a fixed budget so `make check`
 *   spends a few seconds; each mutant goes through spirv_fuzz_one, which
 *   checks the reader's promises. SPIRV_FUZZ_ITERATIONS and SPIRV_FUZZ_SEED
 *   set the budget and the seed for long runs (doc/cpu-driver.md); run it
 *   under ASan to see reads past the end (`make -C drivers/ze_cpu
 *   fuzz-spirv-asan`).
 * - crafted_modules: modules written word by word to hit what random
 *   mutation rarely reaches: deep type chains (time), array lengths and
 *   struct sizes that overflow, cycles, names without a terminator.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "spirv_fuzz.h"
#include "spirv_reflect.h"
#include "spirv_registry.h"

/* --- A deterministic generator (splitmix64) ------------------------------------------- */

static uint64_t rng_state;

static uint64_t next_random(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t below(size_t n)
{
    return n ? (size_t)(next_random() % n) : 0;
}

static unsigned long env_number(const char *name, unsigned long fallback)
{
    const char *text = getenv(name);
    return text != NULL && *text != '\0' ? strtoul(text, NULL, 0) : fallback;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --- Mutations ---------------------------------------------------------------------------- */

/* The opcodes the reader interprets, for structure-aware mutations. */
static const uint16_t interesting_opcodes[] = {14, 15, 16, 19, 20, 21, 22, 23, 28, 30,
                                               32, 43, 48, 49, 50, 54, 55, 71, 39, 0};

static uint32_t interesting_word(uint32_t bound)
{
    const uint32_t values[] = {0,         1,      2,         3,          4,          5,
                               8,         0xffff, 0x10000,   0x7fffffff, 0x80000000, 0xffffffff,
                               bound - 1, bound,  bound + 1, 1u << 24};
    return values[below(sizeof values / sizeof values[0])];
}

typedef struct blob {
    const uint32_t *words;
    size_t num_words;
    uint32_t *starts; /* word offsets of the instructions */
    size_t num_starts;
} blob_t;

static void index_blob(blob_t *b, const sdpa_spirv_module_t *m)
{
    b->words = (const uint32_t *)(const void *)m->code;
    b->num_words = m->size / 4;
    b->starts = malloc(b->num_words * sizeof *b->starts);
    b->num_starts = 0;
    for (size_t at = 5; at < b->num_words;) {
        uint32_t count = b->words[at] >> 16;
        b->starts[b->num_starts++] = (uint32_t)at;
        if (count == 0)
            break;
        at += count;
    }
}

/* Applies one random mutation to words[0..*n) (capacity cap words). */
static void mutate(uint32_t *words, size_t *n, size_t cap, const blob_t *b)
{
    uint32_t bound = *n > 3 ? words[3] : 100;
    size_t at = b->num_starts ? b->starts[below(b->num_starts)] : 5;
    if (at >= *n)
        at = *n > 5 ? 5 + below(*n - 5) : 0;
    switch (below(10)) {
    case 0: /* flip a bit anywhere */
        if (*n)
            words[below(*n)] ^= 1u << below(32);
        break;
    case 1: /* an interesting value anywhere */
        if (*n)
            words[below(*n)] = interesting_word(bound);
        break;
    case 2: /* an instruction's word count */
        if (at < *n)
            words[at] = (words[at] & 0xffffu) |
                        (uint32_t)below(b->num_words < 0xffff ? 64 : 0x10000) << 16;
        break;
    case 3: /* an instruction's opcode */
        if (at < *n)
            words[at] = (words[at] & 0xffff0000u) |
                        interesting_opcodes[below(sizeof interesting_opcodes / sizeof(uint16_t))];
        break;
    case 4: /* an operand of an instruction: another id, or an interesting value */
        if (at + 1 < *n) {
            size_t operand = at + 1 + below(4);
            if (operand < *n)
                words[operand] = below(2) ? (uint32_t)below(bound + 2) : interesting_word(bound);
        }
        break;
    case 5: /* the header: bound, version, magic */
        if (*n > 3)
            words[below(4)] = below(2) ? interesting_word(bound) : (uint32_t)next_random();
        break;
    case 6: /* cut the module short */
        *n = below(*n + 1);
        break;
    case 7: /* delete an instruction-sized range */
        if (at < *n) {
            size_t len = 1 + below(8);
            if (at + len > *n)
                len = *n - at;
            memmove(words + at, words + at + len, (*n - at - len) * 4);
            *n -= len;
        }
        break;
    case 8: /* duplicate an instruction elsewhere */
        if (at < *n && b->num_starts) {
            uint32_t copy[64];
            size_t len = (words[at] >> 16) ? (words[at] >> 16) : 1;
            size_t to = b->starts[below(b->num_starts)];
            if (len <= 64 && at + len <= *n && to <= *n && *n + len <= cap) {
                memcpy(copy, words + at, len * 4);
                memmove(words + to + len, words + to, (*n - to) * 4);
                memcpy(words + to, copy, len * 4);
                *n += len;
            }
        }
        break;
    default: /* random words in a row */
        for (size_t k = below(6) + 1; k > 0 && *n; k--)
            words[below(*n)] = (uint32_t)next_random();
        break;
    }
}

START_TEST(mutated_modules)
{
    unsigned long iterations = env_number("SPIRV_FUZZ_ITERATIONS", 40000);
    rng_state = env_number("SPIRV_FUZZ_SEED", 1);
    blob_t blobs[32];
    size_t num_blobs = sdpa_spirv_module_count < 32 ? sdpa_spirv_module_count : 32;
    size_t cap = 0;
    for (size_t i = 0; i < num_blobs; i++) {
        index_blob(&blobs[i], &sdpa_spirv_modules[i]);
        ck_assert_int_eq(spirv_fuzz_one(sdpa_spirv_modules[i].code, sdpa_spirv_modules[i].size), 1);
        if (blobs[i].num_words > cap)
            cap = blobs[i].num_words;
    }
    cap += 1024;
    uint32_t *words = malloc(cap * 4);
    unsigned long accepted = 0;
    double t0 = now_seconds(), slowest = 0.0;
    for (unsigned long i = 0; i < iterations; i++) {
        /* The small modules three times in four: more mutants per second. */
        const blob_t *b = &blobs[below(num_blobs)];
        if (below(4) != 0)
            for (size_t k = 0; k < num_blobs && b->num_words > 4096; k++)
                b = &blobs[below(num_blobs)];
        size_t n = b->num_words;
        memcpy(words, b->words, n * 4);
        for (size_t m = below(4) + 1; m > 0; m--)
            mutate(words, &n, cap, b);
        double start = now_seconds();
        accepted += (unsigned long)spirv_fuzz_one((const uint8_t *)words, n * 4);
        double took = now_seconds() - start;
        if (took > slowest)
            slowest = took;
    }
    double total = now_seconds() - t0;
    printf("SPIR-V reader: %lu mutants of %zu modules (seed %lu): %lu accepted, %lu refused, "
           "%.1f s, slowest %.1f ms\n",
           iterations, num_blobs, env_number("SPIRV_FUZZ_SEED", 1), accepted, iterations - accepted,
           total, slowest * 1e3);
    fflush(stdout);
    ck_assert_msg(slowest < 1.0, "one mutant took %.1f s to read", slowest);
    free(words);
    for (size_t i = 0; i < num_blobs; i++)
        free(blobs[i].starts);
}
END_TEST

/* --- Crafted modules ------------------------------------------------------------------------- */

typedef struct assembler {
    uint32_t words[4096];
    size_t n;
} assembler_t;

/* Appends an instruction: opcode and its operands (a count, then words). */
static void op(assembler_t *a, uint16_t opcode, size_t count, const uint32_t *operands)
{
    a->words[a->n++] = (uint32_t)(count + 1) << 16 | opcode;
    for (size_t i = 0; i < count; i++)
        a->words[a->n++] = operands[i];
}

#define OP(a, opcode, ...)                                                                         \
    op(a, opcode, sizeof((uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t), (uint32_t[]){__VA_ARGS__})

enum { ID_VOID = 1, ID_FN_TYPE = 2, ID_FN = 3, ID_INT = 4, ID_PARAM = 5, ID_FIRST_FREE = 10 };

/* Header, and OpEntryPoint Kernel %3 "k". */
static void begin_module(assembler_t *a, uint32_t bound)
{
    a->n = 0;
    const uint32_t header[5] = {0x07230203, 0x00010200, 0, bound, 0};
    memcpy(a->words, header, sizeof header);
    a->n = 5;
    OP(a, 15, 6, ID_FN, 'k'); /* "k\0\0\0" */
    OP(a, 19, ID_VOID);
    OP(a, 21, ID_INT, 32, 0);
}

/* OpFunction %void %3, one OpFunctionParameter of param_type, OpFunctionEnd. */
static void end_module(assembler_t *a, uint32_t param_type)
{
    OP(a, 54, ID_VOID, ID_FN, 0, ID_FN_TYPE);
    OP(a, 55, param_type, ID_PARAM);
    OP(a, 56);
}

/* Reads a; returns the first kernel's first argument (kind UNSUPPORTED + 1
 * when the module is refused). */
static spirv_kernel_arg_t reflect_first_arg(const assembler_t *a, double *seconds)
{
    double start = now_seconds();
    spirv_reflection_t *r = NULL;
    char why[128];
    spirv_kernel_arg_t arg = {SPIRV_ARG_UNSUPPORTED + 1, 0};
    if (spirv_reflect(a->words, a->n, &r, why, sizeof why) == 0) {
        ck_assert_uint_eq(r->num_kernels, 1);
        ck_assert_uint_eq(r->kernels[0].num_args, 1);
        arg = r->kernels[0].args[0];
    }
    spirv_reflection_free(r);
    *seconds = now_seconds() - start;
    ck_assert_int_ge(spirv_fuzz_one((const uint8_t *)a->words, a->n * 4), 0);
    return arg;
}

START_TEST(crafted_modules)
{
    assembler_t *a = malloc(sizeof *a);
    double seconds;

    /* A chain of 30 structs, each of two of the previous: 2^30 paths
     * through the type graph, a size of 4 GiB. Read in no time, refused
     * as too large. */
    begin_module(a, 100);
    uint32_t previous = ID_INT;
    for (uint32_t level = 0; level < 30; level++) {
        OP(a, 30, ID_FIRST_FREE + level, previous, previous);
        previous = ID_FIRST_FREE + level;
    }
    OP(a, 32, 90, 7, previous); /* Function pointer: a struct passed by value */
    end_module(a, 90);
    spirv_kernel_arg_t arg = reflect_first_arg(a, &seconds);
    ck_assert_msg(seconds < 0.5, "a 30-deep struct chain took %.1f s", seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_UNSUPPORTED);

    /* The same chain, 16 deep: 4 * 2^16 = 256 KiB, a legal value. */
    begin_module(a, 100);
    previous = ID_INT;
    for (uint32_t level = 0; level < 16; level++) {
        OP(a, 30, ID_FIRST_FREE + level, previous, previous);
        previous = ID_FIRST_FREE + level;
    }
    OP(a, 32, 90, 7, previous);
    end_module(a, 90);
    arg = reflect_first_arg(a, &seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_VALUE);
    ck_assert_uint_eq(arg.size, 4u << 16);

    /* Arrays whose byte size overflows 32 and 64 bits: refused, not wrapped
     * to a small size. */
    const uint32_t lengths[][2] = {{0, 0x40}, {1, 0x40000000}, {0xffffffff, 0xffffffff}};
    for (int i = 0; i < 3; i++) {
        begin_module(a, 100);
        OP(a, 43, ID_INT, 20, lengths[i][0]); /* a 32-bit constant... */
        a->words[a->n - 4] = 5u << 16 | 43;   /* ...made 64-bit */
        a->words[a->n++] = lengths[i][1];
        OP(a, 28, 21, ID_INT, 20); /* int[length] */
        OP(a, 32, 90, 7, 21);
        end_module(a, 90);
        arg = reflect_first_arg(a, &seconds);
        ck_assert_msg(arg.kind == SPIRV_ARG_UNSUPPORTED, "array %d: kind %d, %u bytes", i,
                      (int)arg.kind, arg.size);
    }

    /* A struct of 200 members of 16 KiB: over 3 MiB, too large. */
    begin_module(a, 100);
    OP(a, 43, ID_INT, 20, 4096);
    OP(a, 28, 21, ID_INT, 20); /* int[4096] */
    uint32_t members[201] = {22};
    for (int m = 1; m <= 200; m++)
        members[m] = 21;
    op(a, 30, 201, members);
    OP(a, 32, 90, 7, 22);
    end_module(a, 90);
    arg = reflect_first_arg(a, &seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_UNSUPPORTED);

    /* A struct that contains itself, and a type that is its own element. */
    begin_module(a, 100);
    OP(a, 30, 22, ID_INT, 23);
    OP(a, 30, 23, 22);
    OP(a, 32, 90, 7, 22);
    end_module(a, 90);
    arg = reflect_first_arg(a, &seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_UNSUPPORTED);
    begin_module(a, 100);
    OP(a, 23, 22, 22, 4); /* a vector of itself */
    end_module(a, 22);
    arg = reflect_first_arg(a, &seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_UNSUPPORTED);

    /* An entry point name without its terminator, at the module's end. */
    begin_module(a, 100);
    a->n = 5;
    a->words[a->n++] = 4u << 16 | 15;
    a->words[a->n++] = 6;
    a->words[a->n++] = ID_FN;
    a->words[a->n++] = 0x6b6b6b6b; /* "kkkk", no NUL */
    arg = reflect_first_arg(a, &seconds);
    ck_assert_int_eq(arg.kind, SPIRV_ARG_UNSUPPORTED + 1);
    free(a);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(crafted_modules),
            TEST_ONCE(mutated_modules),
    };
    const test_suite_t suite = {.name = "spirv_reflect", .timeout = 600};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
