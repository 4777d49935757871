// The ascend-precision pass (docs/design.md §5): the CANN precision modes, the TF policy, the override files.
// One check prefix per case group (`// ===== group PREFIX` below; functions named `@<prefix>_...`); every RUN line
// reads every case and checks its groups' prefixes. The cases are independent functions, so most runs read the
// file as one module (a third of the time of --split-input-file); the must_keep_origin_dtype runs split it and use
// --verify-diagnostics because the other groups' f32 convolutions have no kernel there (an error of the whole
// module otherwise; that mode's errors: ascend-precision-invalid.mlir). The separator lines split the cases for them
// and for test/passes/test_precision.py, which runs every case in every mode.
// The framework policies: the TF group, then TORCH (PyTorch autocast) and MS (MindSpore's amp levels).
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision}' | filecheck %s --check-prefixes=MIX,MIXLIST_LIB
// RUN: ascend-opt %s --precision_mode_v2=mixed_float16 | filecheck %s --check-prefix=MIX
// RUN: ascend-opt %s --precision_mode=allow_mix_precision_fp16 | ascend-opt --precision_mode=allow_mix_precision | filecheck %s --check-prefix=MIX
// RUN: ascend-opt %s -p ascend-precision | filecheck %s --check-prefix=FP16
// RUN: ascend-opt %s --precision_mode_v2=fp16 | filecheck %s --check-prefix=FP16
// RUN: ascend-opt %s -p 'ascend-precision{mode=force_fp32}' | filecheck %s --check-prefixes=FP32,CUBE_FP32
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_fp32_to_fp16}' | filecheck %s --check-prefix=TOFP16
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{mode=must_keep_origin_dtype}' --verify-diagnostics | filecheck %s --check-prefix=ORIGIN
// RUN: ascend-opt %s --split-input-file --precision_mode_v2=origin --verify-diagnostics | filecheck %s --check-prefix=ORIGIN
// RUN: ascend-opt %s --precision_mode=cube_fp16in_fp32out | filecheck %s --check-prefix=CUBE
// RUN: ascend-opt %s --precision_mode_v2=cube_fp16in_fp32out | filecheck %s --check-prefix=CUBE
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | filecheck %s --check-prefixes=BF16,CASTS,CASTS_BF16
// RUN: ascend-opt %s --precision_mode_v2=mixed_bfloat16 --soc_version=ascend910b | filecheck %s --check-prefix=BF16
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_fp32_to_bf16 soc=ascend910b}' | filecheck %s --check-prefix=BF16_TOBF
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision_bf16}' 2>/dev/null | filecheck %s --check-prefix=BF16_NOBF
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision soc=ascend910b}' | ascend-opt -p 'ascend-precision{mode=allow_mix_precision soc=ascend910b}' | filecheck %s --check-prefixes=CASTS,CASTS_F16
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | ascend-opt -p 'ascend-precision{mode=allow_mix_precision_bf16 soc=ascend910b}' | filecheck %s --check-prefixes=CASTS,CASTS_BF16
// RUN: ascend-opt %s --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/mixlist-black-add.json | filecheck %s --check-prefix=MIXLIST_BLACK
// RUN: ascend-opt %s -p 'ascend-precision{mode=allow_mix_precision modify-mixlist="%S/Inputs/mixlist-black-add-white-remove.json"}' | filecheck %s --check-prefix=MIXLIST_BLACK
// RUN: ascend-opt %s --precision_mode=allow_mix_precision --modify_mixlist=%S/Inputs/mixlist-white-remove.json | filecheck %s --check-prefix=MIXLIST_GRAY
// RUN: ascend-opt %s --precision_mode_v2=mixed_float16 --modify_mixlist=%S/Inputs/mixlist-moves.json | filecheck %s --check-prefix=MIXLIST_MOVES
// RUN: ascend-opt %s --precision_mode=allow_mix_precision --keep_dtype=%S/Inputs/keep_dtype.txt --customize_dtypes=%S/Inputs/customize_dtypes.cfg | filecheck %s --check-prefix=OVR
// RUN: ascend-opt %s -p 'ascend-precision{mode=force_fp16 keep-dtype="%S/Inputs/keep_dtype.txt"}' | filecheck %s --check-prefix=OVR_KEEP
// RUN: ascend-opt %s -p 'ascend-precision{policy=tf}' | ascend-opt -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=TF
// RUN: ascend-opt %s -p 'ascend-precision{policy=tf amp_dtype=bf16 soc=ascend910b}' | filecheck %s --check-prefix=TFBF16
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=TREAT_INFER_AS_DENY ascend-opt %s -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=TFLEVEL_DENY
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=tensor_cores_only ascend-opt %s -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=TFLEVEL_TC
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=UNSAFE_FORCE_ALL ascend-opt %s -p 'ascend-precision{policy=tf}' | env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=UNSAFE_FORCE_ALL ascend-opt -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=TFLEVEL_FORCE
// RUN: ascend-opt %s --amp_policy=tf --keep_dtype=%S/Inputs/tf_fetches.txt | filecheck %s --check-prefix=TFKEEP
// RUN: ascend-opt %s -p 'ascend-precision{policy=tf keep-dtype="%S/Inputs/tf_fetches.txt"}' | ascend-opt -p 'ascend-precision{policy=tf keep-dtype="%S/Inputs/tf_fetches.txt"}' | filecheck %s --check-prefix=TFKEEP
// RUN: ascend-opt %s -p 'ascend-precision{policy=torch}' | filecheck %s --check-prefix=TORCH
// RUN: ascend-opt %s -p 'ascend-precision{policy=torch amp_dtype=bf16 soc=ascend910b}' | filecheck %s --check-prefix=TORCH_BF16
// RUN: ascend-opt %s -p 'ascend-precision{policy=mindspore level=O0}' | filecheck %s --check-prefix=MS_O0
// RUN: ascend-opt %s -p 'ascend-precision{policy=mindspore level=O1}' | filecheck %s --check-prefix=MS_O1
// RUN: ascend-opt %s -p 'ascend-precision{policy=mindspore level=O2}' | filecheck %s --check-prefix=MS_O2
// RUN: ascend-opt %s -p 'ascend-precision{policy=mindspore}' | filecheck %s --check-prefix=MS_O2
// RUN: ascend-opt %s -p 'ascend-precision{policy=mindspore level=O3}' | filecheck %s --check-prefix=MS_O3

// ===== group MIX (allow_mix_precision (v2 mixed_float16)) =====
// COM: allow_mix_precision (= allow_mix_precision_fp16 = v2 mixed_float16): fp32 ops are decided by list:
// COM: white -> fp16, black -> fp32, gray -> follows its producers. The third MIX RUN line (two passes) checks that the pass is idempotent.
// COM: Each inserted cast sits right before its first consumer (arguments are not cast at the top).

// MIX-LABEL: func.func @mix_mlp
// MIX-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[B:.*]]: tensor<4xf32>) -> tensor<8x4xf32>
// MIX-NEXT: %[[XH:.*]] = ascend.Cast %[[X]] : (tensor<8x16xf32>) -> tensor<8x16xf16>
// MIX-NEXT: %[[WH:.*]] = ascend.Cast %[[W]] : (tensor<16x4xf32>) -> tensor<16x4xf16>
// MIX-NEXT: %[[Y:.*]] = ascend.MatMulV2 %[[XH]], %[[WH]] {name = "fc1"} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// MIX-NEXT: %[[BH:.*]] = ascend.Cast %[[B]] : (tensor<4xf32>) -> tensor<4xf16>
// MIX-NEXT: %[[Z:.*]] = ascend.BiasAdd %[[Y]], %[[BH]] : (tensor<8x4xf16>, tensor<4xf16>) -> tensor<8x4xf16>
// MIX-NEXT: %[[R:.*]] = ascend.Relu %[[Z]] : (tensor<8x4xf16>) -> tensor<8x4xf16>
// MIX-NEXT: %[[S:.*]] = ascend.SoftmaxV2 %[[R]] : (tensor<8x4xf16>) -> tensor<8x4xf16>
// MIX-NEXT: %[[OUT:.*]] = ascend.Cast %[[S]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// MIX-NEXT: func.return %[[OUT]] : tensor<8x4xf32>
func.func @mix_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D is white and fp16 only; Relu follows it; MaxPool (fp16 AI Core kernel) follows too.
// MIX-LABEL: func.func @mix_cnn
// MIX-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xf16>
// MIX: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// MIX: %[[R:.*]] = ascend.Relu %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// MIX: %[[P:.*]] = ascend.MaxPool %[[R]] {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
// MIX: %[[OUT:.*]] = ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// MIX-NEXT: func.return %[[OUT]]
func.func @mix_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: Original fp16 ops stay fp16, even the black Log: only fp32 -> fp16 reduction exists.
// MIX-LABEL: func.func @mix_fp16_graph
// MIX-NOT: ascend.Cast
// MIX: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// MIX: ascend.Exp {{.*}} -> tensor<8x4xf16>
// MIX: ascend.Log {{.*}} -> tensor<8x4xf16>
// MIX-NOT: ascend.Cast
// MIX: func.return
func.func @mix_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: A gray chain after a black op stays fp32; after a white op it follows into fp16.
// MIX-LABEL: func.func @mix_gray_chain
// MIX: %[[L:.*]] = ascend.Log %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX: %[[A:.*]] = ascend.Relu %[[L]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX: %[[B:.*]] = ascend.Tanh %[[A]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// MIX: %[[C:.*]] = ascend.Relu %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIX: %[[D:.*]] = ascend.Tanh %[[C]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIX: %[[DO:.*]] = ascend.Cast %[[D]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX: func.return %[[B]], %[[DO]]
func.func @mix_gray_chain(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = ascend.Relu %l : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.Tanh %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Relu %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = ascend.Tanh %c : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %b, %d : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Multi-input gray ops. Add: fp16 (MatMulV2) and fp32 (black ReduceSum) producers -> the more
// COM: precise fp32 wins. Mul: one fp16 producer and an argument (arguments do not vote) -> fp16.
// COM: Sub: only arguments -> keeps its original fp32. The fp32 copy of %m is made right before Add.
// MIX-LABEL: func.func @mix_gray_inputs
// MIX-SAME: (%[[X:.*]]: tensor<8x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// MIX: %[[XH:.*]] = ascend.Cast %[[X]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// MIX: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// MIX-NEXT: %[[S:.*]] = ascend.ReduceSum %[[X]] {{.*}} -> tensor<8x1xf32>
// MIX-NEXT: %[[MF:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NEXT: ascend.Add %[[MF]], %[[S]] : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
// MIX-NEXT: %[[ARG:.*]] = ascend.Mul %[[M]], %[[XH]] : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// MIX-NEXT: ascend.Sub %[[X]], %[[W]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX-NEXT: ascend.Cast %[[ARG]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NEXT: func.return
func.func @mix_gray_inputs(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %both = ascend.Add %m, %s : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  %arg = ascend.Mul %m, %x : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %none = ascend.Sub %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %both, %arg, %none : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Training step: forward and backward in fp16, the black optimizer update in fp32.
// COM: One cast of %x serves both MatMulV2s.
// MIX-LABEL: func.func @mix_train
// MIX-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[T:.*]]: tensor<8x4xf32>, %[[LR:.*]]: tensor<f32>)
// MIX-COUNT-1: ascend.Cast %[[X]] :
// MIX-NOT: ascend.Cast %[[X]] :
// MIX: %[[Y:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// MIX: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf16>, tensor<8x4xf16>)
// MIX: ascend.ReluGrad {{.*}} -> tensor<8x4xf16>
// MIX: %[[DW:.*]] = ascend.MatMulV2 {{.*}} -> tensor<16x4xf16>
// MIX-NEXT: %[[DWF:.*]] = ascend.Cast %[[DW]] : (tensor<16x4xf16>) -> tensor<16x4xf32>
// MIX-NEXT: ascend.ApplyGradientDescent %[[W]], %[[LR]], %[[DWF]] {{.*}} -> tensor<16x4xf32>
func.func @mix_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true, name = "fc_grad"} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// COM: CNN training step: Conv2DBackpropFilter runs its fp16-in / fp32-out kernel, so the fp32
// COM: momentum update needs no cast of the gradient.
// MIX-LABEL: func.func @mix_cnn_train
// MIX: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf16>
// MIX: %[[DW:.*]] = ascend.Conv2DBackpropFilter {{.*}} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
// MIX-NEXT: ascend.ApplyMomentumD %{{.*}}, %{{.*}}, %{{.*}}, %[[DW]], %{{.*}} : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<f32>, tensor<4x3x3x3xf32>, tensor<f32>)
// MIX-NOT: ascend.Cast
// MIX: func.return
func.func @mix_cnn_train(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dy: tensor<1x4x3x3xf32>, %acc: tensor<4x3x3x3xf32>, %lr: tensor<f32>, %mom: tensor<f32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>) {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %c {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  %dp = ascend.MaxPoolGrad %c, %p, %dy {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dp {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  %w2, %a2 = ascend.ApplyMomentumD %w, %acc, %lr, %dw, %mom : (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>, tensor<f32>, tensor<4x3x3x3xf32>, tensor<f32>) -> (tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>)
  func.return %w2, %a2 : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>
}

// -----

// COM: Integer tensors never change; BatchNorm of fp16 data keeps its fp32 statistics.
// MIX-LABEL: func.func @mix_mixed_dtypes
// MIX-NOT: ascend.Cast
// MIX: ascend.ArgMaxV2 %{{.*}} : (tensor<8x10xf32>) -> tensor<8xi32>
// MIX: ascend.Add %{{.*}}, %{{.*}} : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
// MIX: ascend.BatchNorm {{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
// MIX-NOT: ascend.Cast
// MIX: func.return
func.func @mix_mixed_dtypes(%x: tensor<8x10xf32>, %i: tensor<8xi32>, %n: tensor<8xi32>, %bx: tensor<2x4x8x8xf16>, %st: tensor<4xf32>) -> (tensor<8xi32>, tensor<8xi32>, tensor<2x4x8x8xf16>) {
  %am = ascend.ArgMaxV2 %x : (tensor<8x10xf32>) -> tensor<8xi32>
  %ia = ascend.Add %i, %n : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  %y, %m, %v = ascend.BatchNorm %bx, %st, %st, %st, %st : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>)
  func.return %am, %ia, %y : tensor<8xi32>, tensor<8xi32>, tensor<2x4x8x8xf16>
}

// -----

// COM: User casts are kept. A user cast votes with its output dtype; an exact round trip through a
// COM: user cast (f16 -> f32, wanted back in f16) uses the fp16 value instead of adding a cast.
// MIX-LABEL: func.func @mix_user_casts
// MIX-SAME: (%[[H:.*]]: tensor<8x8xf16>, %[[X:.*]]: tensor<8x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// MIX: %[[UP:.*]] = ascend.Cast %[[H]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NEXT: %[[WH:.*]] = ascend.Cast %[[W]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// MIX-NEXT: ascend.MatMulV2 %[[H]], %[[WH]]
// MIX: %[[DOWN:.*]] = ascend.Cast %[[X]] : (tensor<8x8xf32>) -> tensor<8x8xf16>
// MIX: ascend.Cast %[[DOWN]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX: ascend.MatMulV2 %[[DOWN]], %[[WH]]
// MIX: ascend.Relu %[[UP]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @mix_user_casts(%h: tensor<8x8xf16>, %x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %up = ascend.Cast %h : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %up, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %down = ascend.Cast %x : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %back = ascend.Cast %down : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %back, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ascend.Relu %up : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %m, %down, %n, %r : tensor<8x8xf32>, tensor<8x8xf16>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: One cast per (value, dtype), shared by every consumer: %a is cast to fp32 once for Log and ReduceSum.
// MIX-LABEL: func.func @mix_shared
// MIX: %[[A:.*]] = ascend.MatMulV2
// MIX-NEXT: %[[AF:.*]] = ascend.Cast %[[A]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NOT: ascend.Cast %[[A]] :
// MIX: ascend.Log %[[AF]]
// MIX: ascend.Exp %[[A]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIX: ascend.ReduceSum %[[AF]]
func.func @mix_shared(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>) {
  %a = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = ascend.Log %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %d = ascend.Exp %a : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %e = ascend.ReduceSum %a : (tensor<8x8xf32>) -> tensor<f32>
  func.return %c, %d, %e : tensor<8x8xf32>, tensor<8x8xf32>, tensor<f32>
}

// -----

// COM: A cast goes right before its first consumer, whatever op that is, and is shared by the later ones:
// COM: the fp32 copy of %m is made for the call and reused by the black Log; the cast of %r back to the
// COM: result dtype goes right before func.return.
// MIX-LABEL: func.func @mix_first_consumer
// MIX: %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// MIX-NEXT: %[[R:.*]] = ascend.Relu %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIX-NEXT: %[[MF:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NEXT: %[[C:.*]] = func.call @mix_callee(%[[MF]]) : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX-NEXT: %[[L:.*]] = ascend.Log %[[MF]] : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIX-NEXT: %[[RF:.*]] = ascend.Cast %[[R]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIX-NEXT: func.return %[[RF]], %[[C]], %[[L]]
func.func private @mix_callee(tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @mix_first_consumer(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %r = ascend.Relu %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %c = func.call @mix_callee(%m) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = ascend.Log %m : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %c, %l : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: Constants do not vote; they are cast to what their consumers run in, and a constant whose
// COM: every use is then a cast to fp16 is stored in fp16 (ATC's fp16 weights): no cast is left.
// COM: The Reshape of an argument has no voting producer, keeps fp32 and is cast for MatMulV2.
// MIX-LABEL: func.func @mix_constants
// COM: The casts of MatMulV2's operands sit right before it, in operand order.
// MIX: %[[C:.*]] = ascend.Const dense<1.000000e+00> : tensor<4xf16>
// MIX-NEXT: %[[R:.*]] = ascend.Reshape %{{.*}} : (tensor<4xf32>) -> tensor<1x4xf32>
// MIX-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4xf32>) -> tensor<1x4xf16>
// MIX-NEXT: %[[WH:.*]] = ascend.Cast %{{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf16>
// MIX-NEXT: %[[M:.*]] = ascend.MatMulV2 %[[RH]], %[[WH]], %[[C]] : (tensor<1x4xf16>, tensor<4x4xf16>, tensor<4xf16>) -> tensor<1x4xf16>
// MIX-NEXT: ascend.Add %[[M]], %[[C]] : (tensor<1x4xf16>, tensor<4xf16>) -> tensor<1x4xf16>
func.func @mix_constants(%x: tensor<4xf32>, %w: tensor<4x4xf32>) -> tensor<1x4xf32> {
  %c = ascend.Const dense<1.0> : tensor<4xf32>
  %r = ascend.Reshape %x : (tensor<4xf32>) -> tensor<1x4xf32>
  %m = ascend.MatMulV2 %r, %w, %c : (tensor<1x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  %a = ascend.Add %m, %c : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  func.return %a : tensor<1x4xf32>
}

// -----

// COM: Hand-written caps: fp16-in / fp32-out is MatMulV2's only fp16 kernel, so the white op takes it.
// COM: A kernel the op cannot verify with (Relu (f16) -> f32) is ignored: the white Relu stays fp32.
// MIX-LABEL: func.func @mix_hand_caps
// MIX: %[[M:.*]] = ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf32>
// MIX-NEXT: ascend.Relu %[[M]] {{.*}} : (tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @mix_hand_caps(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = ascend.MatMulV2 %x, %x {caps = #ascend.caps<(f32, f32, f32) -> f32, (f16, f16, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = ascend.Relu %0 {caps = #ascend.caps<(f32) -> f32, (f16) -> f32>, list = #ascend.list<white>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %1 : tensor<4x4xf32>
}

// -----

// ===== group FP16 (force_fp16 (v2 fp16), the default) =====
// COM: force_fp16 (ATC's default, v2 fp16): every op with an fp16 kernel runs in fp16, whatever its
// COM: list or original dtype; an op without one keeps its original dtype.

// FP16-LABEL: func.func @fp16_mlp
// FP16-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xf16>
// FP16-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// FP16-NEXT: ascend.Cast %{{.*}} : (tensor<4xf32>) -> tensor<4xf16>
// FP16-NEXT: ascend.BiasAdd {{.*}} : (tensor<8x4xf16>, tensor<4xf16>) -> tensor<8x4xf16>
// FP16: ascend.Relu {{.*}} -> tensor<8x4xf16>
// FP16: %[[S:.*]] = ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf16>
// FP16: %[[OUT:.*]] = ascend.Cast %[[S]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// FP16: func.return %[[OUT]] : tensor<8x4xf32>
func.func @fp16_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: MaxPool has an fp32 AI CPU kernel, but force_fp16 takes its fp16 AI Core one.
// FP16-LABEL: func.func @fp16_cnn
// FP16-COUNT-2: ascend.Cast
// FP16: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// FP16: ascend.Relu {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// FP16: %[[P:.*]] = ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
// FP16-NEXT: ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// FP16-NOT: ascend.Cast
func.func @fp16_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// FP16-LABEL: func.func @fp16_fp16_graph
// FP16-NOT: ascend.Cast
// FP16: ascend.Log {{.*}} -> tensor<8x4xf16>
// FP16-NEXT: func.return
func.func @fp16_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Lists do not matter: the black Log and ReduceSum run in fp16 too, and so does every gray op.
// FP16-LABEL: func.func @fp16_gray
// FP16: ascend.Log {{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// FP16: ascend.Relu {{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// FP16: ascend.ReduceSum {{.*}} : (tensor<8x8xf16>) -> tensor<8x1xf16>
// FP16: ascend.Add {{.*}} : (tensor<8x8xf16>, tensor<8x1xf16>) -> tensor<8x8xf16>
func.func @fp16_gray(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %l = ascend.Log %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %a = ascend.Relu %l : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %x {axes = array<i64: 1>, keep_dims = true} : (tensor<8x8xf32>) -> tensor<8x1xf32>
  %both = ascend.Add %m, %s : (tensor<8x8xf32>, tensor<8x1xf32>) -> tensor<8x8xf32>
  func.return %a, %both : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// COM: The optimizer runs in fp16 as well; BiasAddGrad's fp16 kernel has an fp32 output; the float
// COM: status ops have fp32 kernels only and keep fp32.
// FP16-LABEL: func.func @fp16_train
// FP16: ascend.BiasAddGrad {{.*}} : (tensor<8x4xf16>) -> tensor<4xf32>
// FP16: %[[W2:.*]] = ascend.ApplyGradientDescent {{.*}} : (tensor<16x4xf16>, tensor<f16>, tensor<16x4xf16>) -> tensor<16x4xf16>
// FP16-NEXT: %[[S0:.*]] = ascend.NPUAllocFloatStatus : tensor<8xf32>
// FP16-NEXT: ascend.NPUGetFloatStatus %[[S0]] : (tensor<8xf32>) -> tensor<8xf32>
// FP16-NEXT: %[[W2F:.*]] = ascend.Cast %[[W2]] : (tensor<16x4xf16>) -> tensor<16x4xf32>
// FP16-NEXT: %[[LF:.*]] = ascend.Cast %{{.*}} : (tensor<8xf16>) -> tensor<8xf32>
// FP16-NEXT: func.return %[[W2F]], %[[LF]]
func.func @fp16_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %db = ascend.BiasAddGrad %dr {data_format = "NHWC"} : (tensor<8x4xf32>) -> tensor<4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %s0 = ascend.NPUAllocFloatStatus : tensor<8xf32>
  %s1 = ascend.NPUGetFloatStatus %s0 : (tensor<8xf32>) -> tensor<8xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// COM: An op without an fp16 kernel keeps its original dtype.
// FP16-LABEL: func.func @fp16_no_fp16_kernel
// FP16-NOT: ascend.Cast
// FP16: ascend.Exp {{.*}} : (tensor<4xf32>) -> tensor<4xf32>
func.func @fp16_no_fp16_kernel(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Exp %x {caps = #ascend.caps<(f32) -> f32>} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// ===== group FP32 (force_fp32) =====
// COM: force_fp32 (cube_fp16in_fp32out differs on cube ops: the CUBE group): the most precise kernel an op has:
// COM: fp32; else fp16 in with fp32 out; else fp16. A black op without an fp32 AI Core kernel runs
// COM: its fp32 AI CPU kernel.

// FP32-LABEL: func.func @fp32_mlp
// FP32-NOT: ascend.Cast
// FP32: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
// FP32: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// FP32-NEXT: func.return
func.func @fp32_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D (fp16 only) and the gray MaxPool (fp16 AI Core kernel; its fp32 kernel is AI CPU and
// COM: it is not black) run in fp16, between them Relu goes back to fp32.
// FP32-LABEL: func.func @fp32_cnn
// FP32: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// FP32-NEXT: %[[CF:.*]] = ascend.Cast %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
// FP32-NEXT: %[[R:.*]] = ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// FP32-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf16>
// FP32-NEXT: ascend.MaxPool %[[RH]] {{.*}} -> tensor<1x4x3x3xf16>
func.func @fp32_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: A black MaxPool takes its fp32 AI CPU kernel instead.
// FP32-LABEL: func.func @fp32_black_maxpool
// FP32-NOT: ascend.Cast
// FP32: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
func.func @fp32_black_maxpool(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %p = ascend.MaxPool %x {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, list = #ascend.list<black>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: An fp16 graph rises to fp32; casts at the function's edges keep its signature.
// FP32-LABEL: func.func @fp32_fp16_graph
// FP32-SAME: -> tensor<8x4xf16>
// FP32-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf16>) -> tensor<{{.*}}xf32>
// FP32: ascend.MatMulV2 {{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// FP32: %[[L:.*]] = ascend.Log {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// FP32-NEXT: %[[OUT:.*]] = ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
// FP32-NEXT: func.return %[[OUT]] : tensor<8x4xf16>
func.func @fp32_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Cube ops without an fp32 kernel take their fp16-in / fp32-out column.
// FP32-LABEL: func.func @fp32_cube_columns
// FP32: ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf32>
// FP32: ascend.Conv2DBackpropFilter {{.*}} : (tensor<1x3x8x8xf16>, tensor<1x4x6x6xf16>) -> tensor<4x3x3x3xf32>
func.func @fp32_cube_columns(%a: tensor<4x4xf32>, %x: tensor<1x3x8x8xf32>, %dy: tensor<1x4x6x6xf32>) -> (tensor<4x4xf32>, tensor<4x3x3x3xf32>) {
  %m = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16, (f16, f16, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %dw = ascend.Conv2DBackpropFilter %x, %dy {filter_size = array<i64: 4, 3, 3, 3>, strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  func.return %m, %dw : tensor<4x4xf32>, tensor<4x3x3x3xf32>
}

// -----

// COM: A training step stays in fp32 except the fp16-only MaxPoolGrad (gray).
// FP32-LABEL: func.func @fp32_train
// FP32: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// FP32: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
// FP32: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf16>
func.func @fp32_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>, %c: tensor<1x4x6x6xf32>, %p: tensor<1x4x3x3xf32>) -> (tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dw = ascend.MatMulV2 %x, %g {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  %dp = ascend.MaxPoolGrad %c, %p, %p {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %w2, %l, %dp : tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>
}

// -----

// ===== group TOFP16 (allow_fp32_to_fp16) =====
// COM: allow_fp32_to_fp16: an op keeps its original dtype when it has a kernel for it, else runs in fp16.

// TOFP16-LABEL: func.func @tofp16_mlp
// TOFP16-NOT: ascend.Cast
// TOFP16: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
// TOFP16: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @tofp16_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Conv2D and MaxPool have no fp32 AI Core kernel: fp16. Relu between them keeps fp32.
// TOFP16-LABEL: func.func @tofp16_cnn
// TOFP16: %[[C:.*]] = ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// TOFP16-NEXT: %[[CF:.*]] = ascend.Cast %[[C]] : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
// TOFP16-NEXT: %[[R:.*]] = ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// TOFP16-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf16>
// TOFP16-NEXT: %[[P:.*]] = ascend.MaxPool %[[RH]] {{.*}} -> tensor<1x4x3x3xf16>
// TOFP16-NEXT: %[[OUT:.*]] = ascend.Cast %[[P]] : (tensor<1x4x3x3xf16>) -> tensor<1x4x3x3xf32>
// TOFP16-NEXT: func.return %[[OUT]]
func.func @tofp16_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: fp16 ops stay fp16; one without an fp16 kernel rises to fp32.
// TOFP16-LABEL: func.func @tofp16_fp16_graph
// TOFP16: %[[E:.*]] = ascend.Exp {{.*}} : (tensor<8x4xf16>) -> tensor<8x4xf16>
// TOFP16-NEXT: %[[EF:.*]] = ascend.Cast %[[E]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// TOFP16-NEXT: %[[L:.*]] = ascend.Log %[[EF]] {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// TOFP16-NEXT: %[[OUT:.*]] = ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
func.func @tofp16_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e {caps = #ascend.caps<(f32) -> f32>} : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Gray and black lists play no part: everything with an fp32 kernel keeps fp32.
// TOFP16-LABEL: func.func @tofp16_train
// TOFP16-NOT: ascend.Cast
// TOFP16: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// TOFP16: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @tofp16_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// ===== group ORIGIN (must_keep_origin_dtype (v2 origin)) =====
// COM: must_keep_origin_dtype (v2 origin): every op keeps its original dtype. An unsupported fp16 op
// COM: rises to fp32; an unsupported fp32 op runs its AI CPU fp32 kernel (else: ascend-precision-invalid.mlir).

// ORIGIN-LABEL: func.func @origin_mlp
// ORIGIN-NOT: ascend.Cast
// ORIGIN: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
// ORIGIN: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @origin_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: A CNN written with fp16 convolutions: Conv2D stays fp16, the fp32 MaxPool runs on the AI CPU.
// ORIGIN-LABEL: func.func @origin_cnn
// ORIGIN: %[[C:.*]] = ascend.Conv2D {{.*}} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
// ORIGIN-NEXT: %[[CF:.*]] = ascend.Cast %[[C]]
// ORIGIN-NEXT: ascend.Relu %[[CF]] : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// ORIGIN-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
// ORIGIN-NEXT: func.return
func.func @origin_cnn(%x: tensor<1x3x8x8xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf16>, tensor<4x3x3x3xf16>) -> tensor<1x4x6x6xf16>
  %cf = ascend.Cast %c : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %cf : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: fp16 ops keep fp16; the one without an fp16 kernel rises to fp32.
// ORIGIN-LABEL: func.func @origin_fp16_graph
// ORIGIN: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// ORIGIN: %[[E:.*]] = ascend.Exp {{.*}} : (tensor<8x4xf16>) -> tensor<8x4xf16>
// ORIGIN-NEXT: %[[EF:.*]] = ascend.Cast %[[E]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// ORIGIN-NEXT: %[[L:.*]] = ascend.Log %[[EF]] {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// ORIGIN-NEXT: ascend.Cast %[[L]] : (tensor<8x4xf32>) -> tensor<8x4xf16>
func.func @origin_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e {caps = #ascend.caps<(f32) -> f32>} : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: Mixed precision written by hand (user casts) is kept exactly.
// ORIGIN-LABEL: func.func @origin_manual_mix
// ORIGIN: %[[XH:.*]] = ascend.Cast %{{.*}} : (tensor<8x16xf32>) -> tensor<8x16xf16>
// ORIGIN: %[[WH:.*]] = ascend.Cast %{{.*}} : (tensor<16x4xf32>) -> tensor<16x4xf16>
// ORIGIN: %[[Y:.*]] = ascend.MatMulV2 %[[XH]], %[[WH]] : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
// ORIGIN: ascend.Relu %[[Y]] : (tensor<8x4xf32>) -> tensor<8x4xf32>
// ORIGIN-NOT: ascend.Cast
func.func @origin_manual_mix(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %xh = ascend.Cast %x : (tensor<8x16xf32>) -> tensor<8x16xf16>
  %wh = ascend.Cast %w : (tensor<16x4xf32>) -> tensor<16x4xf16>
  %y = ascend.MatMulV2 %xh, %wh : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %r : tensor<8x4xf32>
}

// -----

// ORIGIN-LABEL: func.func @origin_train
// ORIGIN-NOT: ascend.Cast
// ORIGIN: ascend.MaxPoolGrad {{.*}} -> tensor<1x4x6x6xf32>
// ORIGIN: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @origin_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>, %c: tensor<1x4x6x6xf32>, %p: tensor<1x4x3x3xf32>) -> (tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %y, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dp = ascend.MaxPoolGrad %c, %p, %p {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>, tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %dw = ascend.MatMulV2 %x, %g {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l, %dp : tensor<16x4xf32>, tensor<8xf32>, tensor<1x4x6x6xf32>
}

// -----

// ===== group CUBE (cube_fp16in_fp32out) =====
// COM: cube_fp16in_fp32out (current CANN): cube ops prefer fp16 in with fp32 out, then fp32/fp32, then
// COM: fp16/fp16; every other op as force_fp32 (fp32 where supported). force_fp32 keeps fp32 cube ops.

// CUBE-LABEL: func.func @cube_mlp
// CUBE: %[[X:.*]] = ascend.Cast %x : (tensor<8x16xf32>) -> tensor<8x16xf16>
// CUBE: %[[W:.*]] = ascend.Cast %w : (tensor<16x4xf32>) -> tensor<16x4xf16>
// CUBE: ascend.MatMulV2 %[[X]], %[[W]] {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf32>
// CUBE-NEXT: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// CUBE-NEXT: func.return
// CUBE_FP32-LABEL: func.func @cube_mlp
// CUBE_FP32-NOT: ascend.Cast
// CUBE_FP32: ascend.MatMulV2 {{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
func.func @cube_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc1"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// COM: Without an fp16-in/fp32-out kernel a cube op takes fp32/fp32, then fp16/fp16.
// CUBE-LABEL: func.func @cube_fallbacks
// CUBE: ascend.MatMulV2 {{.*}} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CUBE: ascend.MatMulV2 {{.*}} : (tensor<4x4xf16>, tensor<4x4xf16>) -> tensor<4x4xf16>
func.func @cube_fallbacks(%a: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %m = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16, (f32, f32, f32) -> f32>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = ascend.MatMulV2 %a, %a {caps = #ascend.caps<(f16, f16, f16) -> f16>} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// ===== group BF16 (the bf16 modes) =====
// COM: allow_mix_precision_bf16 (v2 mixed_bfloat16): the mix rules with bf16 as the low dtype.
// COM: allow_fp32_to_bf16 (TOBF): keep the original dtype where a kernel has it, else bf16 (like allow_fp32_to_fp16).
// COM: On ascend910 (NOBF) there are no bf16 kernels: white ops stay fp32 (with a warning); fp16-only ops run in fp16.

// BF16-LABEL: func.func @bf16_mlp
// BF16-COUNT-2: ascend.Cast %{{.*}} : (tensor<{{.*}}xf32>) -> tensor<{{.*}}xbf16>
// BF16-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xbf16>
// BF16-NEXT: ascend.Cast %{{.*}} : (tensor<4xf32>) -> tensor<4xbf16>
// BF16-NEXT: ascend.BiasAdd {{.*}} : (tensor<8x4xbf16>, tensor<4xbf16>) -> tensor<8x4xbf16>
// BF16: %[[S:.*]] = ascend.SoftmaxV2 {{.*}} : (tensor<8x4xbf16>) -> tensor<8x4xbf16>
// BF16-NEXT: ascend.Cast %[[S]] : (tensor<8x4xbf16>) -> tensor<8x4xf32>
// BF16_TOBF-LABEL: func.func @bf16_mlp
// BF16_TOBF-NOT: ascend.Cast
// BF16_TOBF: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
// BF16_NOBF-LABEL: func.func @bf16_mlp
// BF16_NOBF-NOT: ascend.Cast
// BF16_NOBF: ascend.MatMulV2 {{.*}} -> tensor<8x4xf32>
func.func @bf16_mlp(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %z = ascend.BiasAdd %y, %b : (tensor<8x4xf32>, tensor<4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %z : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %s : tensor<8x4xf32>
}

// -----

// BF16-LABEL: func.func @bf16_cnn
// BF16: ascend.Conv2D {{.*}} : (tensor<1x3x8x8xbf16>, tensor<4x3x3x3xbf16>) -> tensor<1x4x6x6xbf16>
// BF16-NEXT: ascend.Relu {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x6x6xbf16>
// BF16-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x3x3xbf16>
// BF16_TOBF-LABEL: func.func @bf16_cnn
// BF16_TOBF: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xbf16>
// BF16_TOBF: ascend.Relu {{.*}} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
// BF16_TOBF: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xbf16>) -> tensor<1x4x3x3xbf16>
// BF16_NOBF-LABEL: func.func @bf16_cnn
// BF16_NOBF: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// BF16_NOBF-NEXT: ascend.Relu {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x6x6xf16>
// BF16_NOBF-NEXT: ascend.MaxPool {{.*}} : (tensor<1x4x6x6xf16>) -> tensor<1x4x3x3xf16>
func.func @bf16_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32>
  func.return %p : tensor<1x4x3x3xf32>
}

// -----

// COM: Original fp16 ops stay fp16 in the bf16 modes too.
// BF16-LABEL: func.func @bf16_fp16_graph
// BF16-NOT: ascend.Cast
// BF16: ascend.Log {{.*}} -> tensor<8x4xf16>
// BF16_TOBF-LABEL: func.func @bf16_fp16_graph
// BF16_TOBF-NOT: ascend.Cast
// BF16_TOBF: ascend.Log {{.*}} -> tensor<8x4xf16>
func.func @bf16_fp16_graph(%x: tensor<8x16xf16>, %w: tensor<16x4xf16>) -> tensor<8x4xf16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
  %e = ascend.Exp %y : (tensor<8x4xf16>) -> tensor<8x4xf16>
  %l = ascend.Log %e : (tensor<8x4xf16>) -> tensor<8x4xf16>
  func.return %l : tensor<8x4xf16>
}

// -----

// COM: An fp16-only white op (hand-written caps) next to a bf16 one. The gray Add gets an fp16 and a
// COM: bf16 vote: neither holds the other, so it runs in fp32. fp16 -> bf16 goes through fp32 (the
// COM: fp32 copy made for Add); each cast sits right before its first consumer.
// BF16-LABEL: func.func @bf16_fp16_meets_bf16
// BF16: %[[H:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// BF16: %[[B:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// BF16-NEXT: %[[HF:.*]] = ascend.Cast %[[H]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// BF16-NEXT: %[[BF:.*]] = ascend.Cast %[[B]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// BF16-NEXT: ascend.Add %[[HF]], %[[BF]] : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// BF16-NEXT: %[[HB:.*]] = ascend.Cast %[[HF]] : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// BF16-NEXT: ascend.MatMulV2 %[[HB]], %{{.*}} : (tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x8xbf16>
func.func @bf16_fp16_meets_bf16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %h = ascend.MatMul %x, %w {caps = #ascend.caps<(f16, f16, f16) -> f16>} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %b = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.Add %h, %b : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %n = ascend.MatMulV2 %h, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %s, %n : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// BF16-LABEL: func.func @bf16_train
// BF16: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xbf16>, tensor<8x4xbf16>)
// BF16: ascend.ReluGrad {{.*}} -> tensor<8x4xbf16>
// BF16: %[[DW:.*]] = ascend.MatMulV2 {{.*}} -> tensor<16x4xbf16>
// BF16-NEXT: %[[DWF:.*]] = ascend.Cast %[[DW]] : (tensor<16x4xbf16>) -> tensor<16x4xf32>
// BF16-NEXT: ascend.ApplyGradientDescent %{{.*}}, %{{.*}}, %[[DWF]] {{.*}} -> tensor<16x4xf32>
// BF16_TOBF-LABEL: func.func @bf16_train
// BF16_TOBF-NOT: ascend.Cast
// BF16_TOBF: ascend.ApplyGradientDescent {{.*}} -> tensor<16x4xf32>
func.func @bf16_train(%x: tensor<8x16xf32>, %w: tensor<16x4xf32>, %t: tensor<8x4xf32>, %lr: tensor<f32>) -> (tensor<16x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %r = ascend.Relu %y : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %l, %g = ascend.SoftmaxCrossEntropyWithLogits %r, %t : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  %dr = ascend.ReluGrad %g, %r : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %dw = ascend.MatMulV2 %x, %dr {transpose_x1 = true} : (tensor<8x16xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
  %w2 = ascend.ApplyGradientDescent %w, %lr, %dw : (tensor<16x4xf32>, tensor<f32>, tensor<16x4xf32>) -> tensor<16x4xf32>
  func.return %w2, %l : tensor<16x4xf32>, tensor<8xf32>
}

// -----

// ===== group CASTS (the casts the pass inserts and erases) =====
// COM: A user's cast f32 -> LOW of a value the pass retyped to LOW would make an exact round trip
// COM: LOW -> f32 -> LOW (f16 or bf16), which vanishes (docs/design.md §5): no cast back to f32 is inserted for it,
// COM: and the user's cast, now an identity, is erased (its uses read the value). Not folded: a user cast whose
// COM: input stays f32, bf16 into an f32 -> f16 cast (kept, fed through f32), f32 -> f16 -> f32.
// COM: The CASTS RUN lines run the pass twice: it is idempotent.

// CASTS-LABEL: func.func @casts_to_f16
// CASTS_F16:         %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// CASTS_F16-NEXT:    %[[R:.*]] = ascend.Relu %[[M]] {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CASTS_F16-NEXT:    %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CASTS_F16-NEXT:    %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// CASTS_F16-NEXT:    func.return %[[R]], %[[L]]
// CASTS_BF16:        %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// CASTS_BF16-NEXT:   %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// CASTS_BF16-NEXT:   %[[U:.*]] = ascend.Cast %[[UP]] {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CASTS_BF16-NEXT:   %[[R:.*]] = ascend.Relu %[[U]] {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// CASTS_BF16-NEXT:   %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// CASTS_BF16-NEXT:   func.return %[[R]], %[[L]]
func.func @casts_to_f16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %m {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %r = ascend.Relu %u {name = "relu"} : (tensor<8x8xf16>) -> tensor<8x8xf16>
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %l : tensor<8x8xf16>, tensor<8x8xf32>
}

// -----

// COM: The same with bf16: folded under the bf16 mode; an f16 value into the f32 -> bf16 cast goes through f32.
// CASTS-LABEL: func.func @casts_to_bf16
// CASTS_BF16:        %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xbf16>
// CASTS_BF16-NEXT:   %[[R:.*]] = ascend.Relu %[[M]] {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
// CASTS_BF16-NEXT:   %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xbf16>) -> tensor<8x8xf32>
// CASTS_BF16-NEXT:   %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// CASTS_BF16-NEXT:   func.return %[[R]], %[[L]]
// CASTS_F16:         %[[M:.*]] = ascend.MatMulV2 {{.*}} -> tensor<8x8xf16>
// CASTS_F16-NEXT:    %[[UP:.*]] = ascend.Cast %[[M]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CASTS_F16-NEXT:    %[[U:.*]] = ascend.Cast %[[UP]] {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xbf16>
// CASTS_F16-NEXT:    %[[R:.*]] = ascend.Relu %[[U]] {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
// CASTS_F16-NEXT:    %[[L:.*]] = ascend.Log %[[UP]] {name = "log"}
// CASTS_F16-NEXT:    func.return %[[R]], %[[L]]
func.func @casts_to_bf16(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xbf16>, tensor<8x8xf32>) {
  %m = ascend.MatMulV2 %x, %w {name = "mm"} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %u = ascend.Cast %m {name = "user"} : (tensor<8x8xf32>) -> tensor<8x8xbf16>
  %r = ascend.Relu %u {name = "relu"} : (tensor<8x8xbf16>) -> tensor<8x8xbf16>
  %l = ascend.Log %m {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %r, %l : tensor<8x8xbf16>, tensor<8x8xf32>
}

// -----

// COM: Log (black) stays f32: the user's f32 -> f16 cast of it is kept, and f32 -> f16 -> f32 is never folded
// COM: (the second Log reads the user's round trip, not %l).
// CASTS-LABEL: func.func @casts_stays_f32
// CASTS:       %[[L:.*]] = ascend.Log %{{.*}} {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CASTS-NEXT:  %[[K:.*]] = ascend.Cast %[[L]] {name = "kept"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
// CASTS-NEXT:  %[[T:.*]] = ascend.Cast %[[K]] {name = "trip"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
// CASTS-NEXT:  %[[E:.*]] = ascend.Log %[[T]] {name = "log2"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// CASTS-NEXT:  func.return %[[K]], %[[E]]
func.func @casts_stays_f32(%x: tensor<8x8xf32>) -> (tensor<8x8xf16>, tensor<8x8xf32>) {
  %l = ascend.Log %x {name = "log"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = ascend.Cast %l {name = "kept"} : (tensor<8x8xf32>) -> tensor<8x8xf16>
  %t = ascend.Cast %k {name = "trip"} : (tensor<8x8xf16>) -> tensor<8x8xf32>
  %e = ascend.Log %t {name = "log2"} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %k, %e : tensor<8x8xf16>, tensor<8x8xf32>
}

// -----

// ===== group MIXLIST (--modify_mixlist) =====
// COM: --modify_mixlist, the CANN guide's three ways to treat the white-listed MatMulV2:
// COM:   BLACK: black-list to-add (from white to black), alone or with white-list to-remove: fp32.
// COM:   GRAY:  white-list to-remove only: MatMulV2 becomes gray (not black) and follows its producer.
// COM: MOVES: Exp gray -> white, Log black -> gray, ReduceSum black -> gray (to-remove), Relu gray -> black.

// MIXLIST_LIB-LABEL: func.func @mixlist_matmuls
// MIXLIST_LIB: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// MIXLIST_LIB-NEXT: ascend.MatMulV2 %[[P]], {{.*}} -> tensor<8x8xf16>
// MIXLIST_LIB: ascend.MatMulV2 {{.*}} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// MIXLIST_BLACK-LABEL: func.func @mixlist_matmuls
// MIXLIST_BLACK: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// MIXLIST_BLACK-NEXT: %[[PF:.*]] = ascend.Cast %[[P]] : (tensor<8x8xf16>) -> tensor<8x8xf32>
// MIXLIST_BLACK-NEXT: ascend.MatMulV2 %[[PF]], {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// MIXLIST_BLACK-NEXT: ascend.MatMulV2 {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
// MIXLIST_GRAY-LABEL: func.func @mixlist_matmuls
// MIXLIST_GRAY: %[[P:.*]] = ascend.MatMul {{.*}} -> tensor<8x8xf16>
// MIXLIST_GRAY-NEXT: ascend.MatMulV2 %[[P]], {{.*}} : (tensor<8x8xf16>, tensor<8x8xf16>) -> tensor<8x8xf16>
// MIXLIST_GRAY: ascend.MatMulV2 {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
func.func @mixlist_matmuls(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %p = ascend.MatMul %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = ascend.MatMulV2 %p, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = ascend.MatMulV2 %x, %w : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return %y, %z : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// MIXLIST_LIB-LABEL: func.func @mixlist_moves
// MIXLIST_LIB-NOT: ascend.Cast
// MIXLIST_LIB: ascend.Exp %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIXLIST_LIB: ascend.Log %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// MIXLIST_MOVES-LABEL: func.func @mixlist_moves
// MIXLIST_MOVES: %[[E:.*]] = ascend.Exp %{{.*}} : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIXLIST_MOVES-NEXT: %[[L:.*]] = ascend.Log %[[E]] : (tensor<8x8xf16>) -> tensor<8x8xf16>
// MIXLIST_MOVES-NEXT: %[[S:.*]] = ascend.ReduceSum %[[L]] {{.*}} : (tensor<8x8xf16>) -> tensor<8xf16>
// MIXLIST_MOVES-NEXT: %[[SF:.*]] = ascend.Cast %[[S]] : (tensor<8xf16>) -> tensor<8xf32>
// MIXLIST_MOVES-NEXT: ascend.Relu %[[SF]] : (tensor<8xf32>) -> tensor<8xf32>
func.func @mixlist_moves(%x: tensor<8x8xf32>) -> tensor<8xf32> {
  %e = ascend.Exp %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %l = ascend.Log %e : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = ascend.ReduceSum %l {axes = array<i64: 1>} : (tensor<8x8xf32>) -> tensor<8xf32>
  %r = ascend.Relu %s : (tensor<8xf32>) -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

// ===== group OVR (--keep_dtype and --customize_dtypes) =====
// COM: Overrides, strongest first: customize_dtypes > keep_dtype > modify_mixlist > library lists > mode.
// COM: fc1 is in both files: customize_dtypes wins (fp16 in, fp32 out). Relu: customize_dtypes by type.
// COM: fc2 and every SoftmaxV2 keep fp32 (keep_dtype); the unnamed MatMulV2 follows the mode.

// OVR-LABEL: func.func @ovr_overrides
// OVR: %[[H:.*]] = ascend.MatMulV2 {{.*}}{name = "fc1"} : (tensor<8x16xf16>, tensor<16x16xf16>) -> tensor<8x16xf32>
// OVR-NEXT: %[[R:.*]] = ascend.Relu %[[H]] : (tensor<8x16xf32>) -> tensor<8x16xf32>
// OVR-NEXT: ascend.MatMulV2 %[[R]], %{{.*}} {name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// OVR-NEXT: %[[RH:.*]] = ascend.Cast %[[R]] : (tensor<8x16xf32>) -> tensor<8x16xf16>
// OVR-NEXT: ascend.Cast %{{.*}} : (tensor<16x4xf32>) -> tensor<16x4xf16>
// OVR-NEXT: %[[P:.*]] = ascend.MatMulV2 %[[RH]], %{{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// OVR-NEXT: %[[PF:.*]] = ascend.Cast %[[P]] : (tensor<8x4xf16>) -> tensor<8x4xf32>
// OVR-NEXT: ascend.SoftmaxV2 %[[PF]] : (tensor<8x4xf32>) -> tensor<8x4xf32>
// OVR_KEEP-LABEL: func.func @ovr_overrides
// OVR_KEEP: ascend.MatMulV2 {{.*}}{name = "fc1"} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
// OVR_KEEP: ascend.Relu {{.*}} : (tensor<8x16xf16>) -> tensor<8x16xf16>
// OVR_KEEP: ascend.MatMulV2 {{.*}}{name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
// OVR_KEEP: ascend.MatMulV2 {{.*}} : (tensor<8x16xf16>, tensor<16x4xf16>) -> tensor<8x4xf16>
// OVR_KEEP: ascend.SoftmaxV2 {{.*}} : (tensor<8x4xf32>) -> tensor<8x4xf32>
func.func @ovr_overrides(%x: tensor<8x16xf32>, %w1: tensor<16x16xf32>, %w2: tensor<16x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %h = ascend.MatMulV2 %x, %w1 {name = "fc1"} : (tensor<8x16xf32>, tensor<16x16xf32>) -> tensor<8x16xf32>
  %r = ascend.Relu %h : (tensor<8x16xf32>) -> tensor<8x16xf32>
  %o = ascend.MatMulV2 %r, %w2 {name = "fc2"} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %p = ascend.MatMulV2 %r, %w2 : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %p : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %o, %s : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// ===== group TF (policy=tf) =====
// COM: TensorFlow's own tests of grappler's AutoMixedPrecision (auto_mixed_precision_test.cc, AutoMixedPrecisionTest),
// COM: each graph the dialect can express, with TF's expected dtypes (fp16 = DT_HALF) and cast counts.
// COM: TF's fetch nodes are the function results (a fetched Identity: its producer is painted normally);
// COM: TF's preserved fetched nodes are ops marked keep_dtype. The TF RUN line runs the pass twice: a second run changes nothing.

// COM: NoOp: no allow op, nothing changes.
// TF-LABEL: func.func @tf_no_op
// TF-NOT: ascend.Cast
// TF: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32xf32>
// TF: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32xf32>
// TF: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32xf32>
// TF: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32xf32>
// TF-NEXT: func.return
func.func @tf_no_op(%input: tensor<32xf32>) -> tensor<32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32xf32>) -> tensor<32xf32>
  %clr1 = ascend.Relu %deny1 {name = "clr1"} : (tensor<32xf32>) -> tensor<32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32xf32>) -> tensor<32xf32>
  %clr2 = ascend.Relu %infer1 {name = "clr2"} : (tensor<32xf32>) -> tensor<32xf32>
  func.return %clr2 : tensor<32xf32>
}

// -----

// COM: AlreadyFp16: the user's casts and fp16 ops stay as written (same node count).
// TF-LABEL: func.func @tf_already_fp16
// TF-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Cast {{.*}}"cst2"{{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: func.return
func.func @tf_already_fp16(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %cst1 = ascend.Cast %input {name = "cst1"} : (tensor<32x32xf32>) -> tensor<32x32xf16>
  %allow1 = ascend.MatMulV2 %cst1, %cst1 {name = "allow1"} : (tensor<32x32xf16>, tensor<32x32xf16>) -> tensor<32x32xf16>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xf16>) -> tensor<32x32xf16>
  %cst2 = ascend.Cast %clr1 {name = "cst2"} : (tensor<32x32xf16>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %cst2 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr2 : tensor<32x32xf32>
}

// -----

// COM: Simple: deny1 -> clr1 -> infer1 painted deny; clr2 and clr3 joined to allow1 through clear ops;
// COM: infer2 (not between allow ops) and what follows stay fp32; 2 casts. TF's SparseMatMul (on no list)
// COM: is Gelu here, also on no list.
// TF-LABEL: func.func @tf_simple
// TF: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TF-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Gelu {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr5"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: func.return
func.func @tf_simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %deny1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %infer1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr2, %clr2 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow1 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer2 = ascend.Log %clr3 {name = "infer2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %infer2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Gelu %clr4 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr5 = ascend.Relu %deny2 {name = "clr5"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr5 : tensor<32x32xf32>
}

// -----

// COM: BidirectionalClearChain: clear ops reached from allow1 in both directions are painted; 3 casts
// COM: (one cast of %input shared by clr1 and clr2). TF's ShapeN (clear) is ConcatV2D (clear) here.
// TF-LABEL: func.func @tf_bidirectional_clear_chain
// TF-NEXT: %[[IN:.*]] = ascend.Cast %input : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TF-NEXT: ascend.Relu %[[IN]] {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Relu %[[IN]] {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.ConcatV2D {{.*}}"clr3"{{.*}} -> tensor<64x32xf16>
// TF-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: func.return
func.func @tf_bidirectional_clear_chain(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %clr1 = ascend.Relu %input {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %input {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr1, %clr1 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.ConcatV2D %clr1, %clr2 {concat_dim = 0 : i64, name = "clr3"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %clr4 = ascend.Relu %clr2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// COM: PreserveFetches: the fetched allow1, clr2 and clr3 are preserved (keep_dtype); only allow2 is fp16; 2 casts.
// TF-LABEL: func.func @tf_preserve_fetches
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Exp {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TF-NEXT: func.return
func.func @tf_preserve_fetches(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %allow1 = ascend.MatMulV2 %input, %input {name = "allow1", keep_dtype} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny1 = ascend.Exp %infer1 {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2", keep_dtype} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow2 = ascend.MatMulV2 %clr2, %clr2 {name = "allow2"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow2 {name = "clr3", keep_dtype} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Exp %clr3 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %deny2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr2, %clr3, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// COM: ExistingCast: the user's Cast to fp32 feeds only allow ops, so it is retargeted to fp16 (SrcT bool,
// COM: DstT half); 1 cast (back to fp32 at the fetch).
// TF-LABEL: func.func @tf_existing_cast
// TF-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} : (tensor<32x32xi1>) -> tensor<32x32xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TF-NEXT: func.return
func.func @tf_existing_cast(%input: tensor<32x32xi1>) -> tensor<32x32xf32> {
  %cst1 = ascend.Cast %input {name = "cst1"} : (tensor<32x32xi1>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %cst1, %cst1 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1 : tensor<32x32xf32>
}

// -----

// COM: BatchMatMul: allow; 2 casts.
// TF-LABEL: func.func @tf_batch_mat_mul
// TF-NEXT: ascend.Cast %input : (tensor<64x32x32xf32>) -> tensor<64x32x32xf16>
// TF-NEXT: ascend.BatchMatMul {{.*}}"allow1"{{.*}} -> tensor<64x32x32xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<64x32x32xf16>) -> tensor<64x32x32xf32>
// TF-NEXT: func.return
func.func @tf_batch_mat_mul(%input: tensor<64x32x32xf32>) -> tensor<64x32x32xf32> {
  %allow1 = ascend.BatchMatMul %input, %input {name = "allow1"} : (tensor<64x32x32xf32>, tensor<64x32x32xf32>) -> tensor<64x32x32xf32>
  func.return %allow1 : tensor<64x32x32xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Log: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_Log
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Log {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_Log(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Log %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's LogSoftmax: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_LogSoftmaxV2
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.LogSoftmaxV2 {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_LogSoftmaxV2(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.LogSoftmaxV2 %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Sigmoid: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_Sigmoid
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Sigmoid {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_Sigmoid(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Sigmoid %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Softmax: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_SoftmaxV2
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.SoftmaxV2 {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_SoftmaxV2(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.SoftmaxV2 %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Sqrt: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_Sqrt
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_Sqrt(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Sqrt %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Tanh: an infer op between two allow ops is fp16; 2 casts.
// TF-LABEL: func.func @tf_unary_infer_Tanh
// TF-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Tanh {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// TF-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// TF-NEXT: func.return
func.func @tf_unary_infer_Tanh(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Tanh %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// ===== group TFBF16 (policy=tf amp_dtype=bf16) =====
// COM: TensorFlow's bf16 tests of AutoMixedPrecision (auto_mixed_precision_test.cc, AutoMixedPrecisionMklTest:
// COM: the oneDNN lists, where Mean and Sum are infer ops and infer ops right after an allow op become allow).

// COM: AlreadyBf16: nothing changes.
// TFBF16-LABEL: func.func @tfbf16_already_bf16
// TFBF16-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.Cast {{.*}}"cst2"{{.*}} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: func.return
func.func @tfbf16_already_bf16(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %cst1 = ascend.Cast %input {name = "cst1"} : (tensor<32x32xf32>) -> tensor<32x32xbf16>
  %allow1 = ascend.MatMulV2 %cst1, %cst1 {name = "allow1"} : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %cst2 = ascend.Cast %clr1 {name = "cst2"} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %cst2 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr2 : tensor<32x32xf32>
}

// -----

// COM: Simple (oneDNN): as the fp16 case, Log (here deny2, an infer op) not between allow ops stays fp32; 2 casts.
// TFBF16-LABEL: func.func @tfbf16_simple
// TFBF16: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xbf16>
// TFBF16-NEXT: ascend.Cast {{.*}} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Log {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Gelu {{.*}}"deny3"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr5"{{.*}} -> tensor<32x32xf32>
// TFBF16-NEXT: func.return
func.func @tfbf16_simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %deny1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %infer1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr2, %clr2 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow1 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Log %clr3 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %deny2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny3 = ascend.Gelu %clr4 {name = "deny3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr5 = ascend.Relu %deny3 {name = "clr5"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr5 : tensor<32x32xf32>
}

// -----

// COM: InferFollowUpStreamAllow: BiasAdd right after the allow Conv2D, and the Relu after it, are bf16; 4 casts.
// TFBF16-LABEL: func.func @tfbf16_infer_follow_upstream_allow
// TFBF16-NEXT: ascend.Cast %input1 : {{.*}} -> tensor<8x56x56x16xbf16>
// TFBF16-NEXT: ascend.Cast %weight : {{.*}} -> tensor<3x3x16x16xbf16>
// TFBF16-NEXT: ascend.Conv2D {{.*}}"allow"{{.*}} -> tensor<8x56x56x16xbf16>
// TFBF16-NEXT: ascend.Cast %input2 : (tensor<16xf32>) -> tensor<16xbf16>
// TFBF16-NEXT: ascend.BiasAdd {{.*}}"infer"{{.*}} -> tensor<8x56x56x16xbf16>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr"{{.*}} -> tensor<8x56x56x16xbf16>
// TFBF16-NEXT: ascend.Cast {{.*}} -> tensor<8x56x56x16xf32>
// TFBF16-NEXT: func.return
func.func @tfbf16_infer_follow_upstream_allow(%input1: tensor<8x56x56x16xf32>, %weight: tensor<3x3x16x16xf32>, %input2: tensor<16xf32>) -> tensor<8x56x56x16xf32> {
  %allow = ascend.Conv2D %input1, %weight {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, data_format = "NHWC", name = "allow"} : (tensor<8x56x56x16xf32>, tensor<3x3x16x16xf32>) -> tensor<8x56x56x16xf32>
  %infer = ascend.BiasAdd %allow, %input2 {data_format = "NHWC", name = "infer"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %clr = ascend.Relu %infer {name = "clr"} : (tensor<8x56x56x16xf32>) -> tensor<8x56x56x16xf32>
  func.return %clr : tensor<8x56x56x16xf32>
}

// -----

// COM: InferFollowUpStreamDeny: no allow op, nothing changes.
// TFBF16-LABEL: func.func @tfbf16_infer_follow_upstream_deny
// TFBF16-NOT: ascend.Cast
// TFBF16: ascend.Pow {{.*}}"deny"{{.*}} -> tensor<8x56x56x16xf32>
// TFBF16-NEXT: ascend.BiasAdd {{.*}}"infer"{{.*}} -> tensor<8x56x56x16xf32>
// TFBF16-NEXT: ascend.Relu {{.*}}"clr"{{.*}} -> tensor<8x56x56x16xf32>
// TFBF16-NEXT: func.return
func.func @tfbf16_infer_follow_upstream_deny(%input1: tensor<8x56x56x16xf32>, %input2: tensor<16xf32>, %input3: tensor<16xf32>) -> tensor<8x56x56x16xf32> {
  %deny = ascend.Pow %input1, %input2 {name = "deny"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %infer = ascend.BiasAdd %deny, %input3 {data_format = "NHWC", name = "infer"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %clr = ascend.Relu %infer {name = "clr"} : (tensor<8x56x56x16xf32>) -> tensor<8x56x56x16xf32>
  func.return %clr : tensor<8x56x56x16xf32>
}

// -----

// ===== group TFLEVEL (TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL) =====
// COM: TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL (auto_mixed_precision.cc, auto_mixed_precision_lists.h).
// COM: DENY: TF's own test NoInferOp (TREAT_INFER_AS_DENY: the infer ops Sqrt and Log join the deny list),
// COM: with TF's expected dtypes and its 4 casts. TC: TENSOR_CORES_ONLY empties the fp16 infer, deny and clear
// COM: lists, so only the allow ops change (case-insensitive, as TF reads it). FORCE: UNSAFE_FORCE_ALL paints
// COM: every fp32 op with an fp16 kernel and does not propagate deny: one cast in, one cast out; a second
// COM: run changes nothing.

// TFLEVEL_DENY-LABEL: func.func @tflevel_no_infer_op
// TFLEVEL_DENY: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_DENY-NEXT: func.return

// TFLEVEL_TC-LABEL: func.func @tflevel_no_infer_op
// TFLEVEL_TC: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFLEVEL_TC-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFLEVEL_TC-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf32>
// TFLEVEL_TC-NEXT: func.return

// TFLEVEL_FORCE-LABEL: func.func @tflevel_no_infer_op
// TFLEVEL_FORCE-NEXT: ascend.Cast %input : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf16>
// TFLEVEL_FORCE-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFLEVEL_FORCE-NEXT: func.return
func.func @tflevel_no_infer_op(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %deny1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %infer1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr2, %clr2 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow1 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer2 = ascend.Log %clr3 {name = "infer2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %infer2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow2 = ascend.MatMulV2 %clr4, %clr4 {name = "allow2"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer3 = ascend.Log %allow2 {name = "infer3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %infer3 : tensor<32x32xf32>
}

// -----

// ===== group TFKEEP (policy=tf with fetches kept) =====
// COM: TF's PreserveFetches (auto_mixed_precision_test.cc) with the fetch nodes given as a keep_dtype file
// COM: (Inputs/tf_fetches.txt: allow1, clr2, clr3) instead of the `keep_dtype` property: under `tf` the file's
// COM: ops are TF's preserved nodes (MustPreserve: not in should_process_nodes_), never painted allow nor
// COM: entered by the allow passes. TF's expectation: only allow2 is DT_HALF, 2 casts. Without the file,
// COM: allow1, clr1, clr2 and clr3 would be fp16 too (clear ops next to allow1 and allow2).

// TFKEEP-LABEL: func.func @tfkeep_preserve_fetches
// TFKEEP-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TFKEEP-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TFKEEP-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Exp {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TFKEEP-NEXT: func.return
func.func @tfkeep_preserve_fetches(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
  %allow1 = ascend.MatMulV2 %input, %input {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny1 = ascend.Exp %infer1 {name = "deny1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %deny1 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow2 = ascend.MatMulV2 %clr2, %clr2 {name = "allow2"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.Relu %allow2 {name = "clr3"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %deny2 = ascend.Exp %clr3 {name = "deny2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr4 = ascend.Relu %deny2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr2, %clr3, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// ===== group TORCH (policy=torch) =====
// COM: PyTorch autocast (CUDA lists): lower-precision ops (linear = MatMul + its BiasAdd, matmul / bmm, conv2d) run in
// COM: fp16; fp32 ops (softmax, layer_norm, exp, log, sum, the losses) in fp32; promote ops (cat) and unlisted ops (relu,
// COM: add) in the widest dtype of their inputs (the fp32 arguments are the module's parameters).

// TORCH-LABEL: func.func @torch_block
// TORCH: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<8x32xf16>
// TORCH: ascend.BiasAdd {{.*}}"fc_bias"{{.*}} -> tensor<8x32xf16>
// TORCH-NEXT: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<8x32xf16>
// TORCH: ascend.LayerNorm {{.*}}"ln"{{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// TORCH: ascend.Add {{.*}}"residual"{{.*}} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
// TORCH: ascend.ConcatV2D {{.*}}"cat"{{.*}} -> tensor<8x64xf32>
// TORCH: ascend.SoftmaxV2 {{.*}}"softmax"{{.*}} -> tensor<8x64xf32>
// TORCH: ascend.Exp {{.*}}"exp"{{.*}} -> tensor<8x32xf32>
// TORCH: ascend.ConcatV2D {{.*}}"cat16"{{.*}} -> tensor<8x64xf16>
// TORCH_BF16-LABEL: func.func @torch_block
// TORCH_BF16: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<8x32xbf16>
// TORCH_BF16: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<8x32xbf16>
// TORCH_BF16: ascend.SoftmaxV2 {{.*}}"softmax"{{.*}} -> tensor<8x64xf32>
func.func @torch_block(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>) -> (tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>) {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %z = ascend.BiasAdd %y, %b {name = "fc_bias"} : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %r = ascend.Relu %z {name = "relu"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %n, %m, %v = ascend.LayerNorm %r, %g, %beta {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, name = "ln"} : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %a = ascend.Add %n, %r {name = "residual"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x32xf32>
  %c = ascend.ConcatV2D %a, %r {concat_dim = 1 : i64, name = "cat"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  %s = ascend.SoftmaxV2 %c {name = "softmax"} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %e = ascend.Exp %r {name = "exp"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %c16 = ascend.ConcatV2D %r, %r {concat_dim = 1 : i64, name = "cat16"} : (tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<8x64xf32>
  func.return %s, %e, %c16 : tensor<8x64xf32>, tensor<8x32xf32>, tensor<8x64xf32>
}

// -----

// COM: attention: BatchMatMulV2 is torch.matmul / bmm (lower precision); the 0-d fp32 scale does not promote the
// COM: dimensioned fp16 scores; softmax is fp32; the context product casts the probabilities back to fp16.
// TORCH-LABEL: func.func @torch_attention
// TORCH: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xf16>
// TORCH: ascend.Mul {{.*}}"scaled"{{.*}} -> tensor<2x4x4xf16>
// TORCH: ascend.SoftmaxV2 {{.*}}"probs"{{.*}} -> tensor<2x4x4xf32>
// TORCH: ascend.BatchMatMulV2 {{.*}}"context"{{.*}} -> tensor<2x4x8xf16>
// TORCH_BF16-LABEL: func.func @torch_attention
// TORCH_BF16: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xbf16>
func.func @torch_attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>, %scale: tensor<f32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %m = ascend.Mul %s, %scale {name = "scaled"} : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %m {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}

// -----

// COM: conv block: batch_norm takes its fp16 input's dtype (its fp32 statistics do not promote it); relu,
// COM: max_pool2d and reshape are unlisted and stay fp16.
// TORCH-LABEL: func.func @torch_conv_block
// TORCH: ascend.Conv2D {{.*}}"conv"{{.*}} -> tensor<2x4x8x8xf16>
// TORCH: ascend.BNInfer {{.*}}"bn"{{.*}} : (tensor<2x4x8x8xf16>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf16>
// TORCH: ascend.Relu {{.*}}"relu"{{.*}} -> tensor<2x4x8x8xf16>
// TORCH: ascend.MaxPool {{.*}}"pool"{{.*}} -> tensor<2x4x4x4xf16>
// TORCH: ascend.Reshape {{.*}}"flat"{{.*}} -> tensor<2x64xf16>
// TORCH: ascend.MatMulV2 {{.*}}"fc"{{.*}} -> tensor<2x10xf16>
func.func @torch_conv_block(%x: tensor<2x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>, %wf: tensor<64x10xf32>) -> tensor<2x10xf32> {
  %c = ascend.Conv2D %x, %w, %b {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, name = "conv"} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %n = ascend.BNInfer %c, %s, %o, %mean, %var {name = "bn"} : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = ascend.Relu %n {name = "relu"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = ascend.MaxPool %r {ksize = array<i64: 1, 1, 2, 2>, strides = array<i64: 1, 1, 2, 2>, name = "pool"} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %f = ascend.Reshape %p {name = "flat"} : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
  %y = ascend.MatMulV2 %f, %wf {name = "fc"} : (tensor<2x64xf32>, tensor<64x10xf32>) -> tensor<2x10xf32>
  func.return %y : tensor<2x10xf32>
}

// -----

// ===== group MS (policy=mindspore) =====
// COM: MindSpore's amp levels (amp.py lists). Cells are name scopes in MindSpore full names
// COM: (Default/fc1-Dense/BiasAdd-op1: BiasAdd inside the cell fc1 of class Dense); a listed cell decides every op in it.

// MS_O0-LABEL: func.func @ms_mlp
// MS_O0-NOT: ascend.Cast
// MS_O0: func.return
// MS_O1-LABEL: func.func @ms_mlp
// MS_O1: ascend.MatMulV2 {{.*}}fc1-Dense/MatMul-op0{{.*}} -> tensor<8x32xf16>
// MS_O1: ascend.BiasAdd {{.*}}fc1-Dense/BiasAdd-op1{{.*}} -> tensor<8x32xf16>
// MS_O1: ascend.LayerNorm {{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// MS_O1: ascend.Relu {{.*}} -> tensor<8x32xf16>
// MS_O1: ascend.MatMulV2 {{.*}}fc2-Dense/MatMul-op4{{.*}} -> tensor<8x4xf16>
// MS_O1: ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf32>
// MS_O1: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// MS_O2-LABEL: func.func @ms_mlp
// MS_O2: ascend.MatMulV2 {{.*}} -> tensor<8x32xf16>
// MS_O2: ascend.BiasAdd {{.*}} -> tensor<8x32xf16>
// MS_O2: ascend.LayerNorm {{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// MS_O2: ascend.Relu {{.*}} -> tensor<8x32xf16>
// MS_O2: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// MS_O2: ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf16>
// MS_O2: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// MS_O3-LABEL: func.func @ms_mlp
// MS_O3: ascend.LayerNorm {{.*}} -> (tensor<8x32xf16>, tensor<8x1xf16>, tensor<8x1xf16>)
// MS_O3: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf16>, tensor<8x4xf16>)
func.func @ms_mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>, %w2: tensor<32x4xf32>, %labels: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
  %y = ascend.MatMulV2 %x, %w1 {name = "Default/fc1-Dense/MatMul-op0"} : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
  %z = ascend.BiasAdd %y, %b1 {name = "Default/fc1-Dense/BiasAdd-op1"} : (tensor<8x32xf32>, tensor<32xf32>) -> tensor<8x32xf32>
  %n, %mean, %var = ascend.LayerNorm %z, %g, %beta {begin_norm_axis = 1 : i64, begin_params_axis = 1 : i64, name = "Default/ln-LayerNorm/LayerNorm-op2"} : (tensor<8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
  %r = ascend.Relu %n {name = "Default/relu-ReLU/ReLU-op3"} : (tensor<8x32xf32>) -> tensor<8x32xf32>
  %o = ascend.MatMulV2 %r, %w2 {name = "Default/fc2-Dense/MatMul-op4"} : (tensor<8x32xf32>, tensor<32x4xf32>) -> tensor<8x4xf32>
  %s = ascend.SoftmaxV2 %o {name = "Default/SoftmaxV2-op5"} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %loss, %grad = ascend.SoftmaxCrossEntropyWithLogits %o, %labels {name = "Default/loss-SoftmaxCrossEntropyWithLogits/SoftmaxCrossEntropyWithLogits-op6"} : (tensor<8x4xf32>, tensor<8x4xf32>) -> (tensor<8xf32>, tensor<8x4xf32>)
  func.return %s, %loss : tensor<8x4xf32>, tensor<8xf32>
}

// -----

// COM: A CNN: the Reshapes inside a black BatchNorm1d cell stay fp32 under O2; under O1 only the white
// COM: Conv2d cell and the ReLU primitive are fp16; ops without a scope are decided by their primitive.
// MS_O1-LABEL: func.func @ms_cnn
// MS_O1: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// MS_O1: ascend.Relu {{.*}} -> tensor<1x4x6x6xf16>
// MS_O1: ascend.Reshape {{.*}} -> tensor<4x36xf32>
// MS_O1: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf32>
// MS_O2-LABEL: func.func @ms_cnn
// MS_O2: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// MS_O2: ascend.Relu {{.*}} -> tensor<1x4x6x6xf16>
// MS_O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op2{{.*}} -> tensor<4x36xf32>
// MS_O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op3{{.*}} -> tensor<4x36x1x1xf32>
// MS_O2: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf32>, tensor<36xf32>, tensor<36xf32>)
// MS_O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op5{{.*}} -> tensor<4x36xf32>
// MS_O2: ascend.Reshape {{.*}}"flat"{{.*}} -> tensor<144xf16>
// MS_O3-LABEL: func.func @ms_cnn
// MS_O3: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf16>
func.func @ms_cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %s: tensor<36xf32>) -> tensor<144xf32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>, name = "Default/conv1-Conv2d/Conv2D-op0"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r = ascend.Relu %c {name = "Default/ReLU-op1"} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %f = ascend.Reshape %r {name = "Default/bn-BatchNorm1d/Reshape-op2"} : (tensor<1x4x6x6xf32>) -> tensor<4x36xf32>
  %f4 = ascend.Reshape %f {name = "Default/bn-BatchNorm1d/Reshape-op3"} : (tensor<4x36xf32>) -> tensor<4x36x1x1xf32>
  %y, %m, %v = ascend.BatchNorm %f4, %s, %s, %s, %s {name = "Default/bn-BatchNorm1d/BatchNorm-op4"} : (tensor<4x36x1x1xf32>, tensor<36xf32>, tensor<36xf32>, tensor<36xf32>, tensor<36xf32>) -> (tensor<4x36x1x1xf32>, tensor<36xf32>, tensor<36xf32>)
  %b = ascend.Reshape %y {name = "Default/bn-BatchNorm1d/Reshape-op5"} : (tensor<4x36x1x1xf32>) -> tensor<4x36xf32>
  %out = ascend.Reshape %b {name = "flat"} : (tensor<4x36xf32>) -> tensor<144xf32>
  func.return %out : tensor<144xf32>
}

// -----

// COM: P.BatchMatMul (on the white list) is CANN's BatchMatMulV2 too: fp16 at O1; SoftmaxV2 is on no list.
// MS_O1-LABEL: func.func @ms_attention
// MS_O1: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xf16>
// MS_O1: ascend.SoftmaxV2 {{.*}}"probs"{{.*}} -> tensor<2x4x4xf32>
// MS_O1: ascend.BatchMatMulV2 {{.*}}"context"{{.*}} -> tensor<2x4x8xf16>
func.func @ms_attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %s {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}
