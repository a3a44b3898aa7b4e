/*
 * Functions library of the AddOne fixture package (the seed interface):
 * y = x + delta (+ bias, when the manifest declares a second input).
 *
 * Besides the three default entry points it exports deliberately wrong ones
 * that broken fixtures name with the manifest's verify/inferShape/selectImpl
 * keys, so one library serves every variation:
 *   addOneInferTooDeep   sets a rank three above the output's maxDims
 *   addOneSelectUnknown  returns a flavour no implementation has
 *   addOneSelectNull     returns NULL
 *
 * Build switches (one compiler call per library, see ../Makefile):
 *   -DADDONE_NO_VERIFY           leave out customOpVerify (missing symbol)
 *   -DADDONE_ABI_MAJOR=N         export graphcc_customop_abi with major N
 */
#include <graphcc/customop.h>
#include <string.h>

#ifdef ADDONE_ABI_MAJOR
/* Claims the graphcc interface at a major version this graphcc lacks. */
GC_CUSTOMOP_API const uint32_t graphcc_customop_abi =
	(uint32_t)(ADDONE_ABI_MAJOR) << 16 | GC_CUSTOMOP_ABI_MINOR;
#endif

#ifndef ADDONE_NO_VERIFY
/* Params arrive in manifest order: delta (float scalar), axes (int[2]). */
static bool params_ok(const CustomOpParam *params, int32_t numParams)
{
	if (numParams != 2 || !params)
		return false;
	const CustomOpParam *delta = &params[0], *axes = &params[1];
	if (!delta->name || strcmp(delta->name, "delta") || delta->dtype != DTFloat32 ||
	    delta->size != 0 || !delta->data)
		return false;
	if (!axes->name || strcmp(axes->name, "axes") || axes->dtype != DTIInt64 ||
	    axes->size != 2 || !axes->data)
		return false;
	const int64_t *ax = (const int64_t *)axes->data;
	/* The one data-dependent refusal: a negative axis. */
	return ax[0] >= 0 && ax[1] >= 0;
}

GC_CUSTOMOP_API bool customOpVerify(CustomOpIOTensor *inputs, int32_t numInputs,
				    CustomOpIOTensor *outputs, int32_t numOutputs,
				    CustomOpParam *params, int32_t numParams)
{
	if (numInputs < 1 || numInputs > 2 || numOutputs != 1 || !inputs || !outputs)
		return false;
	for (int32_t i = 0; i < numInputs; i++)
		if (inputs[i].dtype != DTFloat32)
			return false;
	if (numInputs == 2) {
		/* bias: one value, or as many as x */
		int64_t n0 = 1, n1 = 1;
		for (int32_t d = 0; d < inputs[0].rank; d++)
			n0 *= inputs[0].dims[d];
		for (int32_t d = 0; d < inputs[1].rank; d++)
			n1 *= inputs[1].dims[d];
		if (n1 != 1 && n1 != n0)
			return false;
	}
	return params_ok(params, numParams);
}
#endif

GC_CUSTOMOP_API bool customOpInferShape(CustomOpIOTensor *outputs, const int32_t numOutputs,
					const CustomOpIOTensor *inputs, const int32_t numInputs,
					const CustomOpParam *params, const int32_t numParams)
{
	(void)params;
	(void)numParams;
	if (numOutputs != 1 || numInputs < 1)
		return false;
	/* outputs[0] arrives with rank = maxDims: the size of its dims buffer. */
	if (inputs[0].rank > outputs[0].rank)
		return false;
	outputs[0].rank = inputs[0].rank;
	for (int32_t d = 0; d < inputs[0].rank; d++)
		outputs[0].dims[d] = inputs[0].dims[d];
	outputs[0].dtype = inputs[0].dtype;
	return true;
}

/* Fills the dims buffer it was given, then claims a rank three beyond it:
 * graphcc must refuse the node without reading or writing past the buffer. */
GC_CUSTOMOP_API bool addOneInferTooDeep(CustomOpIOTensor *outputs, const int32_t numOutputs,
					const CustomOpIOTensor *inputs, const int32_t numInputs,
					const CustomOpParam *params, const int32_t numParams)
{
	(void)inputs;
	(void)numInputs;
	(void)params;
	(void)numParams;
	if (numOutputs < 1)
		return false;
	int32_t room = outputs[0].rank;
	for (int32_t d = 0; d < room; d++)
		outputs[0].dims[d] = 1;
	outputs[0].rank = outputs[0].maxDims + 3;
	outputs[0].dtype = DTFloat32;
	return true;
}

GC_CUSTOMOP_API const char *customOpSelectImpl(CustomOpIOTensor *inputs, int32_t numInputs,
					       CustomOpIOTensor *outputs, int32_t numOutputs,
					       CustomOpParam *params, int32_t numParams,
					       const char *backend)
{
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	if (!backend || strcmp(backend, "Interpreter") || numInputs < 1 ||
	    inputs[0].dtype != DTFloat32)
		return NULL;
	return "addOneFloat";
}

GC_CUSTOMOP_API const char *addOneSelectUnknown(CustomOpIOTensor *inputs, int32_t numInputs,
						CustomOpIOTensor *outputs, int32_t numOutputs,
						CustomOpParam *params, int32_t numParams,
						const char *backend)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	(void)backend;
	return "addOneNoSuchFlavour";
}

GC_CUSTOMOP_API const char *addOneSelectNull(CustomOpIOTensor *inputs, int32_t numInputs,
					     CustomOpIOTensor *outputs, int32_t numOutputs,
					     CustomOpParam *params, int32_t numParams,
					     const char *backend)
{
	(void)inputs;
	(void)numInputs;
	(void)outputs;
	(void)numOutputs;
	(void)params;
	(void)numParams;
	(void)backend;
	return NULL;
}
