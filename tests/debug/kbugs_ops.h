/* The operations of test.kbugs (kbugs.h): X(Type, prefix) for the
 * functions libraries' per-operation symbols <prefix>_infer, <prefix>_select. */
#define KB_OPS(X)                                                                                  \
	X(Scale, scale)                                                                            \
	X(AccumSum, accum_sum)                                                                     \
	X(ChannelBias, channel_bias)                                                               \
	X(PrefixSum, prefix_sum)                                                                   \
	X(Clip6, clip6)                                                                            \
	X(SafeLog, safe_log)                                                                       \
	X(Gamma, gamma)                                                                            \
	X(PadEnd, pad_end)                                                                         \
	X(ArgMaxLast, argmax_last)                                                                 \
	X(SlowCopy, slow_copy)

/* X(symbol, body) for the kernel libraries. */
#define KB_KERNELS(X)                                                                              \
	X(scale_f32, kb_scale)                                                                     \
	X(accum_sum_f32, kb_accum_sum)                                                             \
	X(channel_bias_generic, kb_channel_bias_generic)                                           \
	X(channel_bias_nchw, kb_channel_bias_nchw)                                                 \
	X(prefix_sum_f32, kb_prefix_sum)                                                           \
	X(clip6_f32, kb_clip6)                                                                     \
	X(safe_log_f32, kb_safe_log)                                                               \
	X(gamma_lut_f32, kb_gamma)                                                                 \
	X(pad_end_f32, kb_pad_end)                                                                 \
	X(argmax_last_f32, kb_argmax_last)                                                         \
	X(slow_copy_f32, kb_slow_copy)
