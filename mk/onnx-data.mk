# SequenceProto and OptionalProto (lib/proto/onnx-data.proto): protobuf-c
# code generated next to onnx.proto's, linked into libgraphcc.
GEN_DATA_C := $(B)/gen/onnx-data.pb-c.c
GEN_DATA_H := $(B)/gen/onnx-data.pb-c.h

$(GEN_DATA_H): $(GEN_DATA_C)
$(GEN_DATA_C): lib/proto/onnx-data.proto $(GEN_H)
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen -I/usr/include/onnx -Ilib/proto lib/proto/onnx-data.proto

$(B)/obj/gen/onnx-data.pb-c.o: $(GEN_DATA_C) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g -fPIC -I$(B)/gen -c $< -o $@

LIB_OBJ += $(B)/obj/gen/onnx-data.pb-c.o
$(LIB_SRC:%.c=$(B)/obj/%.o): $(GEN_DATA_H)
