/*
 * abi_layout.c - prints the layout of every struct of sdpa.h that the Python
 * package mirrors with ctypes (python/sdpa_ze/_abi.py), one line per member:
 *
 *     <struct> <member> <offset> <size>
 *
 * and one line "<struct> sizeof 0 <size>" per struct. test_abi_layout.py
 * compares these numbers with the ctypes mirrors, so a change to sdpa.h that
 * the mirrors miss fails the Python tests.
 */
#include <stddef.h>
#include <stdio.h>

#include "sdpa.h"

#define MEMBER(type, member)                                                                       \
    printf("%s %s %zu %zu\n", #type, #member, offsetof(type, member), sizeof(((type *)0)->member))
#define SIZE(type) printf("%s sizeof 0 %zu\n", #type, sizeof(type))

static void tensor_desc(void)
{
    SIZE(sdpa_tensor_desc_t);
    MEMBER(sdpa_tensor_desc_t, dtype);
    MEMBER(sdpa_tensor_desc_t, dims);
    MEMBER(sdpa_tensor_desc_t, strides);
}

static void quant_and_dropout(void)
{
    SIZE(sdpa_quant_desc_t);
    MEMBER(sdpa_quant_desc_t, scales);
    MEMBER(sdpa_quant_desc_t, scales_dtype);
    MEMBER(sdpa_quant_desc_t, zero_points);
    MEMBER(sdpa_quant_desc_t, zero_points_dtype);
    MEMBER(sdpa_quant_desc_t, group_size);
    SIZE(sdpa_dropout_desc_t);
    MEMBER(sdpa_dropout_desc_t, enabled);
    MEMBER(sdpa_dropout_desc_t, host_scalars);
    MEMBER(sdpa_dropout_desc_t, with_offset);
    MEMBER(sdpa_dropout_desc_t, with_mask_output);
}

static void problem_desc(void)
{
    SIZE(sdpa_problem_desc_t);
    MEMBER(sdpa_problem_desc_t, struct_size);
    MEMBER(sdpa_problem_desc_t, struct_version);
    MEMBER(sdpa_problem_desc_t, prop_kind);
    MEMBER(sdpa_problem_desc_t, q);
    MEMBER(sdpa_problem_desc_t, k);
    MEMBER(sdpa_problem_desc_t, v);
    MEMBER(sdpa_problem_desc_t, dst);
    MEMBER(sdpa_problem_desc_t, mask_kind);
    MEMBER(sdpa_problem_desc_t, mask);
    MEMBER(sdpa_problem_desc_t, scale_kind);
    MEMBER(sdpa_problem_desc_t, scale_dtype);
    MEMBER(sdpa_problem_desc_t, invert_scale);
    MEMBER(sdpa_problem_desc_t, softmax_kind);
    MEMBER(sdpa_problem_desc_t, kq_acc_dtype);
    MEMBER(sdpa_problem_desc_t, vs_acc_dtype);
    MEMBER(sdpa_problem_desc_t, k_quant);
    MEMBER(sdpa_problem_desc_t, v_quant);
    MEMBER(sdpa_problem_desc_t, dropout);
    MEMBER(sdpa_problem_desc_t, diff_dst);
    MEMBER(sdpa_problem_desc_t, diff_q);
    MEMBER(sdpa_problem_desc_t, diff_k);
    MEMBER(sdpa_problem_desc_t, diff_v);
    MEMBER(sdpa_problem_desc_t, ds);
    MEMBER(sdpa_problem_desc_t, deterministic);
    MEMBER(sdpa_problem_desc_t, varlen);
    MEMBER(sdpa_problem_desc_t, paged_kv);
    MEMBER(sdpa_problem_desc_t, window);
    MEMBER(sdpa_problem_desc_t, softcap);
    MEMBER(sdpa_problem_desc_t, alibi);
    MEMBER(sdpa_problem_desc_t, num_splits);
    MEMBER(sdpa_problem_desc_t, sinks);
    SIZE(sdpa_varlen_desc_t);
    MEMBER(sdpa_varlen_desc_t, enabled);
    MEMBER(sdpa_varlen_desc_t, batch);
    MEMBER(sdpa_varlen_desc_t, max_seqlen_q);
    MEMBER(sdpa_varlen_desc_t, max_seqlen_k);
    SIZE(sdpa_paged_kv_desc_t);
    MEMBER(sdpa_paged_kv_desc_t, enabled);
    MEMBER(sdpa_paged_kv_desc_t, max_blocks_per_seq);
    MEMBER(sdpa_paged_kv_desc_t, block_table_stride);
    SIZE(sdpa_window_desc_t);
    MEMBER(sdpa_window_desc_t, enabled);
    MEMBER(sdpa_window_desc_t, left);
    MEMBER(sdpa_window_desc_t, right);
}

static void exec_args(void)
{
    SIZE(sdpa_exec_args_t);
    MEMBER(sdpa_exec_args_t, struct_size);
    MEMBER(sdpa_exec_args_t, struct_version);
    MEMBER(sdpa_exec_args_t, q);
    MEMBER(sdpa_exec_args_t, k);
    MEMBER(sdpa_exec_args_t, v);
    MEMBER(sdpa_exec_args_t, dst);
    MEMBER(sdpa_exec_args_t, mask);
    MEMBER(sdpa_exec_args_t, workspace);
    MEMBER(sdpa_exec_args_t, scale);
    MEMBER(sdpa_exec_args_t, scale_ptr);
    MEMBER(sdpa_exec_args_t, k_scales);
    MEMBER(sdpa_exec_args_t, k_zero_points);
    MEMBER(sdpa_exec_args_t, v_scales);
    MEMBER(sdpa_exec_args_t, v_zero_points);
    MEMBER(sdpa_exec_args_t, dropout_p);
    MEMBER(sdpa_exec_args_t, dropout_seed);
    MEMBER(sdpa_exec_args_t, dropout_offset);
    MEMBER(sdpa_exec_args_t, dropout_p_ptr);
    MEMBER(sdpa_exec_args_t, dropout_seed_ptr);
    MEMBER(sdpa_exec_args_t, dropout_offset_ptr);
    MEMBER(sdpa_exec_args_t, dropout_mask);
    MEMBER(sdpa_exec_args_t, diff_dst);
    MEMBER(sdpa_exec_args_t, diff_q);
    MEMBER(sdpa_exec_args_t, diff_k);
    MEMBER(sdpa_exec_args_t, diff_v);
    MEMBER(sdpa_exec_args_t, ds);
    MEMBER(sdpa_exec_args_t, scratch);
    MEMBER(sdpa_exec_args_t, scratch_size);
    MEMBER(sdpa_exec_args_t, command_list);
    MEMBER(sdpa_exec_args_t, signal_event);
    MEMBER(sdpa_exec_args_t, num_wait_events);
    MEMBER(sdpa_exec_args_t, wait_events);
    MEMBER(sdpa_exec_args_t, cu_seqlens_q);
    MEMBER(sdpa_exec_args_t, cu_seqlens_k);
    MEMBER(sdpa_exec_args_t, block_table);
    MEMBER(sdpa_exec_args_t, cache_seqlens);
    MEMBER(sdpa_exec_args_t, alibi_slopes);
    MEMBER(sdpa_exec_args_t, sinks);
    MEMBER(sdpa_exec_args_t, diff_sinks);
}

static void context_and_features(void)
{
    SIZE(sdpa_context_desc_t);
    MEMBER(sdpa_context_desc_t, struct_size);
    MEMBER(sdpa_context_desc_t, struct_version);
    MEMBER(sdpa_context_desc_t, ze_context);
    MEMBER(sdpa_context_desc_t, ze_device);
    MEMBER(sdpa_context_desc_t, command_list);
    MEMBER(sdpa_context_desc_t, flags);
    SIZE(sdpa_features_t);
    MEMBER(sdpa_features_t, struct_size);
    MEMBER(sdpa_features_t, struct_version);
    MEMBER(sdpa_features_t, device_name);
    MEMBER(sdpa_features_t, max_head_size);
    MEMBER(sdpa_features_t, subgroup_size);
    MEMBER(sdpa_features_t, has_f16);
    MEMBER(sdpa_features_t, has_bf16);
    MEMBER(sdpa_features_t, has_backward);
    MEMBER(sdpa_features_t, has_deterministic_backward);
    MEMBER(sdpa_features_t, has_quantized_kv);
    MEMBER(sdpa_features_t, has_dropout);
    MEMBER(sdpa_features_t, has_varlen);
    MEMBER(sdpa_features_t, has_paged_kv);
    MEMBER(sdpa_features_t, has_window);
    MEMBER(sdpa_features_t, has_softcap);
    MEMBER(sdpa_features_t, has_alibi);
    MEMBER(sdpa_features_t, has_split_kv);
    MEMBER(sdpa_features_t, has_merge);
    MEMBER(sdpa_features_t, has_supports_query);
    MEMBER(sdpa_features_t, has_sinks);
    MEMBER(sdpa_features_t, has_value_head_size);
    MEMBER(sdpa_features_t, has_v_view_of_k);
    MEMBER(sdpa_features_t, has_fp8_kv);
}

static void backend_iface(void)
{
    SIZE(sdpa_backend_iface_t);
    MEMBER(sdpa_backend_iface_t, abi_version);
    MEMBER(sdpa_backend_iface_t, struct_size);
    MEMBER(sdpa_backend_iface_t, name);
    MEMBER(sdpa_backend_iface_t, last_error);
    MEMBER(sdpa_backend_iface_t, context_create);
    MEMBER(sdpa_backend_iface_t, context_destroy);
    MEMBER(sdpa_backend_iface_t, context_get_features);
    MEMBER(sdpa_backend_iface_t, context_query);
    MEMBER(sdpa_backend_iface_t, primitive_create);
    MEMBER(sdpa_backend_iface_t, primitive_destroy);
    MEMBER(sdpa_backend_iface_t, primitive_query);
    MEMBER(sdpa_backend_iface_t, primitive_execute);
    MEMBER(sdpa_backend_iface_t, merge_create);
    MEMBER(sdpa_backend_iface_t, merge_execute);
    MEMBER(sdpa_backend_iface_t, primitive_supports);
    SIZE(sdpa_support_t);
    MEMBER(sdpa_support_t, struct_size);
    MEMBER(sdpa_support_t, struct_version);
    MEMBER(sdpa_support_t, status);
    MEMBER(sdpa_support_t, kernel_kind);
    MEMBER(sdpa_support_t, workspace_bytes);
    MEMBER(sdpa_support_t, scratch_bytes);
    MEMBER(sdpa_support_t, message);
    MEMBER(sdpa_support_t, config_string);
}

static void merge(void)
{
    SIZE(sdpa_merge_desc_t);
    MEMBER(sdpa_merge_desc_t, struct_size);
    MEMBER(sdpa_merge_desc_t, struct_version);
    MEMBER(sdpa_merge_desc_t, num_states);
    MEMBER(sdpa_merge_desc_t, softmax_kind);
    MEMBER(sdpa_merge_desc_t, states);
    MEMBER(sdpa_merge_desc_t, states_lse);
    MEMBER(sdpa_merge_desc_t, dst);
    MEMBER(sdpa_merge_desc_t, dst_lse);
    SIZE(sdpa_merge_args_t);
    MEMBER(sdpa_merge_args_t, struct_size);
    MEMBER(sdpa_merge_args_t, struct_version);
    MEMBER(sdpa_merge_args_t, states);
    MEMBER(sdpa_merge_args_t, states_lse);
    MEMBER(sdpa_merge_args_t, dst);
    MEMBER(sdpa_merge_args_t, dst_lse);
    MEMBER(sdpa_merge_args_t, command_list);
    MEMBER(sdpa_merge_args_t, signal_event);
    MEMBER(sdpa_merge_args_t, num_wait_events);
    MEMBER(sdpa_merge_args_t, wait_events);
}

int main(void)
{
    tensor_desc();
    quant_and_dropout();
    problem_desc();
    exec_args();
    context_and_features();
    backend_iface();
    merge();
    /* The version the mirrors describe; the test checks it too. */
    printf("SDPA_ABI_VERSION value 0 %u\n", (unsigned)SDPA_ABI_VERSION);
    return 0;
}
