/* test_spec_values.c - the specialization-constant container. */
#include <check.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "fnv1a.h"
#include "spec_values.h"

/* The container most tests fill, empty before each (a checked fixture). */
static sdpa_spec_values_t v;

static void setup(void)
{
    sdpa_spec_values_init(&v);
}

START_TEST(set_and_read_back)
{
    ck_assert_uint_eq(v.count, 0);
    ck_assert_ptr_null(sdpa_spec_values_find(&v, SDPA_SC_QRY_DT));
    sdpa_spec_values_set_int(&v, SDPA_SC_QRY_DT, 2);
    sdpa_spec_values_set_bool(&v, SDPA_SC_TRANSPOSE_K, 5); /* any non-zero is true */
    sdpa_spec_values_set_int(&v, SDPA_SC_UNROLL_M_KQ, -3);
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(sdpa_spec_values_get_int(&v, SDPA_SC_QRY_DT), 2);
    ck_assert_int_eq(sdpa_spec_values_get_int(&v, SDPA_SC_UNROLL_M_KQ), -3);
    ck_assert_int_eq(sdpa_spec_values_get_bool(&v, SDPA_SC_TRANSPOSE_K), 1);
    /* Replacing keeps one entry. */
    sdpa_spec_values_set_int(&v, SDPA_SC_QRY_DT, 3);
    sdpa_spec_values_set_bool(&v, SDPA_SC_TRANSPOSE_K, 0);
    ck_assert_uint_eq(v.count, 3);
    ck_assert_int_eq(sdpa_spec_values_get_int(&v, SDPA_SC_QRY_DT), 3);
    ck_assert_int_eq(sdpa_spec_values_get_bool(&v, SDPA_SC_TRANSPOSE_K), 0);
}
END_TEST

START_TEST(ids_sorted_whatever_the_order_set)
{
    static const sdpa_spec_id_t ids[] = {SDPA_SC_WG_N_DBR, SDPA_SC_QRY_DT, SDPA_SC_KV_GROUP_SIZE,
                                         SDPA_SC_VAL_GROUP_SIZE, SDPA_SC_KEY_DT};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        sdpa_spec_values_set_int(&v, ids[i], (int32_t)i);
    ck_assert_uint_eq(v.count, 5);
    for (uint32_t i = 1; i < v.count; i++)
        ck_assert_uint_lt(v.ids[i - 1], v.ids[i]);
    ck_assert_uint_eq(v.ids[0], 100);
    ck_assert_uint_eq(v.ids[4], 185);
    ck_assert_int_eq(sdpa_spec_values_get_int(&v, SDPA_SC_WG_N_DBR), 0);
    ck_assert_int_eq(sdpa_spec_values_get_int(&v, SDPA_SC_KEY_DT), 4);
}
END_TEST

START_TEST(module_constants_point_at_values_of_the_right_size)
{
    sdpa_spec_values_set_bool(&v, SDPA_SC_IS_TRAINING, 1);
    sdpa_spec_values_set_int(&v, SDPA_SC_MASK_KIND, 0x01020304);
    sdpa_spec_values_set_bool(&v, SDPA_SC_D_FULL, 0);
    ze_module_constants_t mc = sdpa_spec_values_ze(&v);
    ck_assert_uint_eq(mc.numConstants, 3);
    ck_assert_uint_eq(mc.pConstantIds[0], SDPA_SC_D_FULL);
    ck_assert_uint_eq(mc.pConstantIds[1], SDPA_SC_MASK_KIND);
    ck_assert_uint_eq(mc.pConstantIds[2], SDPA_SC_IS_TRAINING);
    /* bool: one byte holding 0 or 1; int: four bytes. */
    const uint8_t *d_full = mc.pConstantValues[0];
    ck_assert_uint_eq(d_full[0], 0);
    int32_t mask_kind;
    memcpy(&mask_kind, mc.pConstantValues[1], 4);
    ck_assert_int_eq(mask_kind, 0x01020304);
    const uint8_t *training = mc.pConstantValues[2];
    ck_assert_uint_eq(training[0], 1);
    for (uint32_t i = 0; i < mc.numConstants; i++) {
        const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find(mc.pConstantIds[i]);
        ck_assert_ptr_nonnull(info);
        ck_assert_uint_eq(info->size, info->type == SDPA_SPEC_TYPE_bool ? 1 : 4);
    }

    /* A copy needs its own arrays. */
    sdpa_spec_values_t copy = v;
    ze_module_constants_t mc2 = sdpa_spec_values_ze(&copy);
    ck_assert_ptr_eq(mc2.pConstantIds, copy.ids);
    ck_assert_ptr_eq(mc2.pConstantValues[1], &copy.slots[1]);
}
END_TEST

START_TEST(equality_and_hash_ignore_set_order)
{
    sdpa_spec_values_t a, b;
    sdpa_spec_values_init(&a);
    sdpa_spec_values_init(&b);
    ck_assert(sdpa_spec_values_equal(&a, &b));
    ck_assert_uint_eq(sdpa_spec_values_hash(&a), sdpa_spec_values_hash(&b));

    sdpa_spec_values_set_int(&a, SDPA_SC_QRY_DT, 2);
    sdpa_spec_values_set_bool(&a, SDPA_SC_TRANSPOSE_K, 1);
    sdpa_spec_values_set_int(&a, SDPA_SC_UNROLL_M_KQ, 16);
    sdpa_spec_values_set_bool(&b, SDPA_SC_TRANSPOSE_K, 1);
    sdpa_spec_values_set_int(&b, SDPA_SC_UNROLL_M_KQ, 32);
    sdpa_spec_values_set_int(&b, SDPA_SC_QRY_DT, 2);
    ck_assert(!sdpa_spec_values_equal(&a, &b));
    ck_assert_uint_ne(sdpa_spec_values_hash(&a), sdpa_spec_values_hash(&b));
    sdpa_spec_values_set_int(&b, SDPA_SC_UNROLL_M_KQ, 16);
    ck_assert(sdpa_spec_values_equal(&a, &b));
    ck_assert_uint_eq(sdpa_spec_values_hash(&a), sdpa_spec_values_hash(&b));

    /* The same value under another id, or one more constant, differs. */
    sdpa_spec_values_t c = a;
    sdpa_spec_values_set_bool(&c, SDPA_SC_D_FULL, 1);
    ck_assert(!sdpa_spec_values_equal(&a, &c));
    ck_assert_uint_ne(sdpa_spec_values_hash(&a), sdpa_spec_values_hash(&c));
    sdpa_spec_values_t d;
    sdpa_spec_values_init(&d);
    sdpa_spec_values_set_int(&d, SDPA_SC_QRY_DT, 2);
    sdpa_spec_values_set_bool(&d, SDPA_SC_D_FULL, 1);
    sdpa_spec_values_set_int(&d, SDPA_SC_UNROLL_M_KQ, 16);
    ck_assert(!sdpa_spec_values_equal(&a, &d));
    ck_assert_uint_ne(sdpa_spec_values_hash(&a), sdpa_spec_values_hash(&d));

    /* Stale pointer arrays do not matter. */
    sdpa_spec_values_ze(&a);
    ck_assert(sdpa_spec_values_equal(&a, &b));
}
END_TEST

START_TEST(every_attention_constant_can_be_set)
{
    uint32_t n = 0;
    for (size_t i = 0; i < sdpa_spec_constant_count; i++) {
        const sdpa_spec_constant_info_t *info = &sdpa_spec_constant_table[i];
        if (info->id < SDPA_SPEC_FIRST_ATTENTION_ID)
            continue;
        /* Today every attention constant is an int or a bool. */
        if (info->type == SDPA_SPEC_TYPE_int)
            sdpa_spec_values_set_int(&v, (sdpa_spec_id_t)info->id, 7);
        else if (info->type == SDPA_SPEC_TYPE_bool)
            sdpa_spec_values_set_bool(&v, (sdpa_spec_id_t)info->id, 1);
        else
            ck_abort_msg("%s has a type this test does not know", info->name);
        n++;
    }
    ck_assert_uint_eq(v.count, n);
    ck_assert_uint_le(n, SDPA_SPEC_VALUES_MAX);
}
END_TEST

/* Programming errors abort (the build keeps assertions on). */
START_TEST(probe_constant_is_refused)
{
    sdpa_spec_values_set_int(&v, SDPA_SC_PROBE_INT, 1);
}
END_TEST

START_TEST(unknown_id_is_refused)
{
    sdpa_spec_values_set_bool(&v, (sdpa_spec_id_t)131, 1); /* retired */
}
END_TEST

START_TEST(wrong_type_is_refused)
{
    sdpa_spec_values_set_bool(&v, SDPA_SC_QRY_DT, 1);
}
END_TEST

START_TEST(long_setter_on_int_is_refused)
{
    sdpa_spec_values_set_long(&v, SDPA_SC_KV_GROUP_SIZE, 1);
}
END_TEST

START_TEST(reading_unset_constant_is_refused)
{
    sdpa_spec_values_get_int(&v, SDPA_SC_QRY_DT);
}
END_TEST

/* The hash is FNV-1a 64 as published (offset basis 0xcbf29ce484222325):
 * the CPU driver's native binaries document it as their checksum. */
START_TEST(fnv1a64_matches_the_published_vectors)
{
    ck_assert_uint_eq(sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, "", 0), 0xcbf29ce484222325ull);
    ck_assert_uint_eq(sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, "a", 1), 0xaf63dc4c8601ec8cull);
    ck_assert_uint_eq(sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, "foobar", 6), 0x85944171f73967e8ull);
    /* Hashing in two steps is hashing the whole. */
    ck_assert_uint_eq(sdpa_fnv1a64(sdpa_fnv1a64(SDPA_FNV1A64_OFFSET, "foo", 3), "bar", 3),
                      0x85944171f73967e8ull);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(set_and_read_back),
            TEST_ONCE(ids_sorted_whatever_the_order_set),
            TEST_ONCE(module_constants_point_at_values_of_the_right_size),
            TEST_ONCE(equality_and_hash_ignore_set_order),
            TEST_ONCE(every_attention_constant_can_be_set),
            TEST_ONCE(fnv1a64_matches_the_published_vectors),
    };
    const test_suite_t desc = {.name = "spec_values", .setup = setup};
    Suite *suite = test_suite_of(&desc, tests, TEST_COUNT(tests), NULL);
    /* Aborts need Check's fork mode (the default; CK_FORK=no skips them). */
    if (getenv("CK_FORK") == NULL || strcmp(getenv("CK_FORK"), "no") != 0) {
        TCase *aborts = tcase_create("programming_errors");
        tcase_add_checked_fixture(aborts, setup, NULL);
        tcase_add_test_raise_signal(aborts, probe_constant_is_refused, SIGABRT);
        tcase_add_test_raise_signal(aborts, unknown_id_is_refused, SIGABRT);
        tcase_add_test_raise_signal(aborts, wrong_type_is_refused, SIGABRT);
        tcase_add_test_raise_signal(aborts, long_setter_on_int_is_refused, SIGABRT);
        tcase_add_test_raise_signal(aborts, reading_unset_constant_is_refused, SIGABRT);
        suite_add_tcase(suite, aborts);
    }
    return test_run_suite(suite);
}
