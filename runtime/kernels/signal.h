/* Signal processing (opset 17): X(Name, min_in, max_in, min_out, max_out). */
#ifndef GC_K_SIGNAL_H
#define GC_K_SIGNAL_H

#define GC_OPS_SIGNAL(X)                                                                           \
	X(HannWindow, 1, 1, 1, 1)                                                                  \
	X(HammingWindow, 1, 1, 1, 1)                                                               \
	X(BlackmanWindow, 1, 1, 1, 1)                                                              \
	X(DFT, 1, 3, 1, 1)                                                                         \
	X(STFT, 2, 4, 1, 1)                                                                        \
	X(MelWeightMatrix, 5, 5, 1, 1)

#endif
