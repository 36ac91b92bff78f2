/*
 * spirv_block_order.c - rewrites a SPIR-V module so that the blocks of every
 * function appear in reverse post-order of its control-flow graph.
 *
 * Usage: spirv_block_order IN.spv OUT.spv. Runs on the build machine,
 * between llvm-spirv and spirv-val.
 *
 * Why: SPIR-V requires that a block appear before every block it dominates.
 * llvm-spirv-15 emits the blocks in LLVM's layout order, which after loop
 * rotation may put a loop's latch before the body that defines the values
 * the latch uses (spirv-val: "ID ... has not been defined"). The portable
 * kernels avoid the loop shapes that trigger it; the fast-path kernels nest
 * loops too deeply for that (an emulated matrix product is a loop inside the
 * key and head-dimension loops), so their build puts the blocks in an order
 * that is valid by construction: in reverse post-order, every block comes
 * after its dominators (a dominator is an ancestor in any depth-first tree).
 * Two more repairs on the way. A loop the source marks "do not unroll"
 * gets an OpLoopMerge, which llvm-spirv-15 sometimes repeats in one block
 * (spirv-val: "Block ... is already a merge block for another header");
 * only the last of a block's OpLoopMerges is kept. And SPIR-V wants a
 * function's OpVariables to be
 * the first instructions of its first block, and llvm-spirv-15 interleaves
 * them with the casts LLVM put between its allocas (or leaves an alloca in
 * a later block); every OpVariable moves to the top of the entry block (its
 * initializer, if any, is a constant, so the move is safe). Nothing else
 * changes: other instructions stay in their blocks, ids keep their values.
 * Blocks unreachable from the entry keep their relative order at the end.
 *
 * Successors come from the terminators: OpBranch, OpBranchConditional and
 * OpSwitch (32-bit selectors, which are all our kernels have: a switch
 * whose operands do not decode as 32-bit literal / label pairs is an error,
 * not a guess).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPIRV_MAGIC 0x07230203u
#define OP_VARIABLE 59u
#define OP_LOOP_MERGE 246u
#define OP_FUNCTION 54u
#define OP_FUNCTION_END 56u
#define OP_LABEL 248u
#define OP_BRANCH 249u
#define OP_BRANCH_CONDITIONAL 250u
#define OP_SWITCH 251u
#define OP_KILL 252u
#define OP_RETURN 253u
#define OP_RETURN_VALUE 254u
#define OP_UNREACHABLE 255u

typedef struct block {
    uint32_t label;    /* result id of its OpLabel */
    size_t first, end; /* word range [first, end) of the block */
    uint32_t succ[2];  /* successor labels (OpSwitch: see succ_words) */
    int n_succ;        /* successors in succ, or -1: OpSwitch */
    size_t term;       /* word index of the terminator */
    int state;         /* depth-first search: 0 new, 1 open, 2 done */
} block_t;

static int fail(const char *what)
{
    fprintf(stderr, "spirv_block_order: %s\n", what);
    return 1;
}

static uint16_t opcode(uint32_t word)
{
    return (uint16_t)(word & 0xffffu);
}

static uint16_t length(uint32_t word)
{
    return (uint16_t)(word >> 16);
}

static int is_terminator(uint16_t op)
{
    return op == OP_BRANCH || op == OP_BRANCH_CONDITIONAL || op == OP_SWITCH || op == OP_KILL ||
           op == OP_RETURN || op == OP_RETURN_VALUE || op == OP_UNREACHABLE;
}

/* Index of the block with this label, or -1. */
static long find_block(const block_t *blocks, size_t n, uint32_t label)
{
    for (size_t i = 0; i < n; i++)
        if (blocks[i].label == label)
            return (long)i;
    return -1;
}

/* The labels an OpSwitch at w[t] branches to: the default and every case,
 * decoded as (32-bit literal, label) pairs. Returns how many (into out,
 * which has room for len words), or -1 if some label is not a block. */
static long switch_targets(const uint32_t *w, size_t t, const block_t *blocks, size_t n,
                           uint32_t *out)
{
    size_t len = length(w[t]);
    if (len < 3 || (len - 3) % 2 != 0)
        return -1;
    long count = 0;
    out[count++] = w[t + 2];
    for (size_t i = t + 3; i + 1 < t + len; i += 2)
        out[count++] = w[i + 1];
    for (long i = 0; i < count; i++)
        if (find_block(blocks, n, out[i]) < 0)
            return -1;
    return count;
}

/* Appends block b's instructions but its OpVariables (and, for the entry,
 * its OpLabel, already written) and all but its last OpLoopMerge to out at
 * *pos; returns how many words it left out besides the OpVariables. */
static size_t copy_block(const uint32_t *w, const block_t *b, int is_entry, uint32_t *out,
                         size_t *pos)
{
    size_t last_merge = 0, dropped = 0;
    for (size_t i = b->first; i < b->end; i += length(w[i]))
        if (opcode(w[i]) == OP_LOOP_MERGE)
            last_merge = i;
    for (size_t i = b->first + (is_entry ? 2 : 0); i < b->end; i += length(w[i])) {
        if (opcode(w[i]) == OP_VARIABLE)
            continue;
        if (opcode(w[i]) == OP_LOOP_MERGE && i != last_merge) {
            dropped += length(w[i]);
            continue;
        }
        memcpy(out + *pos, w + i, length(w[i]) * sizeof(uint32_t));
        *pos += length(w[i]);
    }
    return dropped;
}

/* Appends the blocks of one function in reverse post-order to out (at
 * *pos); blocks[] hold the function's blocks in their original order. */
static int order_function(const uint32_t *w, block_t *blocks, size_t n, uint32_t *out, size_t *pos,
                          size_t *dropped)
{
    size_t *post = malloc(n * sizeof(size_t));
    size_t *stack = malloc(n * sizeof(size_t));
    size_t *next_succ = calloc(n, sizeof(size_t));
    uint32_t *targets = malloc(65536 * sizeof(uint32_t));
    if (!post || !stack || !next_succ || !targets) {
        free(post), free(stack), free(next_succ), free(targets);
        return fail("out of memory");
    }
    size_t n_post = 0, depth = 0;
    int status = 0;
    /* Iterative depth-first search from the entry (block 0). */
    stack[depth++] = 0;
    blocks[0].state = 1;
    while (depth > 0 && status == 0) {
        size_t b = stack[depth - 1];
        const block_t *blk = &blocks[b];
        long n_targets;
        if (blk->n_succ >= 0) {
            n_targets = blk->n_succ;
            memcpy(targets, blk->succ, sizeof(blk->succ));
        } else {
            n_targets = switch_targets(w, blk->term, blocks, n, targets);
            if (n_targets < 0) {
                status = fail("an OpSwitch does not decode as 32-bit cases");
                break;
            }
        }
        if (next_succ[b] < (size_t)n_targets) {
            long s = find_block(blocks, n, targets[next_succ[b]++]);
            if (s < 0) {
                status = fail("a branch targets a label that is not a block of its function");
                break;
            }
            if (blocks[s].state == 0) {
                blocks[s].state = 1;
                stack[depth++] = (size_t)s;
            }
        } else {
            blocks[b].state = 2;
            post[n_post++] = b;
            depth--;
        }
    }
    if (status == 0) {
        /* The entry's OpLabel, then every OpVariable of the function. */
        memcpy(out + *pos, w + blocks[0].first, 2 * sizeof(uint32_t));
        *pos += 2;
        for (size_t b = 0; b < n; b++)
            for (size_t i = blocks[b].first + (b == 0 ? 2 : 0); i < blocks[b].end;
                 i += length(w[i]))
                if (opcode(w[i]) == OP_VARIABLE) {
                    memcpy(out + *pos, w + i, length(w[i]) * sizeof(uint32_t));
                    *pos += length(w[i]);
                }
        for (size_t k = n_post; k-- > 0;)
            *dropped += copy_block(w, &blocks[post[k]], post[k] == 0, out, pos);
        for (size_t b = 0; b < n; b++)
            if (blocks[b].state == 0)
                *dropped += copy_block(w, &blocks[b], 0, out, pos);
    }
    free(post), free(stack), free(next_succ), free(targets);
    return status;
}

static int reorder(const uint32_t *w, size_t words, uint32_t *out, size_t *out_words)
{
    size_t dropped = 0;
    if (words < 5 || w[0] != SPIRV_MAGIC)
        return fail("not a SPIR-V module");
    memcpy(out, w, 5 * sizeof(uint32_t));
    size_t pos = 5, i = 5;
    block_t *blocks = NULL;
    size_t cap = 0;
    while (i < words) {
        size_t len = length(w[i]);
        if (len == 0 || i + len > words) {
            free(blocks);
            return fail("truncated instruction");
        }
        if (opcode(w[i]) != OP_FUNCTION) {
            memcpy(out + pos, w + i, len * sizeof(uint32_t));
            pos += len, i += len;
            continue;
        }
        /* OpFunction and its parameters, up to the first OpLabel. */
        while (i < words && opcode(w[i]) != OP_LABEL && opcode(w[i]) != OP_FUNCTION_END) {
            len = length(w[i]);
            memcpy(out + pos, w + i, len * sizeof(uint32_t));
            pos += len, i += len;
        }
        size_t n = 0;
        while (i < words && opcode(w[i]) == OP_LABEL) {
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                block_t *grown = realloc(blocks, cap * sizeof(block_t));
                if (!grown) {
                    free(blocks);
                    return fail("out of memory");
                }
                blocks = grown;
            }
            block_t *b = &blocks[n++];
            memset(b, 0, sizeof(*b));
            b->label = w[i + 1];
            b->first = i;
            while (i < words && !is_terminator(opcode(w[i])))
                i += length(w[i]) ? length(w[i]) : 1;
            if (i >= words) {
                free(blocks);
                return fail("a block has no terminator");
            }
            b->term = i;
            switch (opcode(w[i])) {
            case OP_BRANCH:
                b->succ[0] = w[i + 1];
                b->n_succ = 1;
                break;
            case OP_BRANCH_CONDITIONAL:
                b->succ[0] = w[i + 2];
                b->succ[1] = w[i + 3];
                b->n_succ = 2;
                break;
            case OP_SWITCH:
                b->n_succ = -1;
                break;
            default:
                b->n_succ = 0;
            }
            i += length(w[i]);
            b->end = i;
        }
        if (n > 0 && order_function(w, blocks, n, out, &pos, &dropped) != 0) {
            free(blocks);
            return 1;
        }
        if (i >= words || opcode(w[i]) != OP_FUNCTION_END) {
            free(blocks);
            return fail("a function does not end with OpFunctionEnd after its blocks");
        }
        out[pos++] = w[i++];
    }
    free(blocks);
    *out_words = pos;
    return pos + dropped == words ? 0 : fail("size changed");
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s IN.spv OUT.spv\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        perror(argv[1]);
        return 1;
    }
    size_t cap = 1 << 20, words = 0;
    uint32_t *w = malloc(cap * sizeof(uint32_t));
    size_t got;
    while (w && (got = fread(w + words, sizeof(uint32_t), cap - words, in)) > 0) {
        words += got;
        if (words == cap) {
            cap *= 2;
            uint32_t *grown = realloc(w, cap * sizeof(uint32_t));
            if (!grown)
                free(w);
            w = grown;
        }
    }
    fclose(in);
    uint32_t *out = w ? malloc(words * sizeof(uint32_t) + 1) : NULL;
    if (!w || !out) {
        free(w);
        free(out);
        return fail("out of memory");
    }
    size_t out_words = 0;
    int status = reorder(w, words, out, &out_words);
    if (status == 0) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(out, sizeof(uint32_t), out_words, f) != out_words || fclose(f) != 0) {
            perror(argv[2]);
            status = 1;
        }
    }
    free(out);
    free(w);
    return status;
}
