// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=TREAT_INFER_AS_DENY ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=DENY
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=tensor_cores_only ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=TC
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=UNSAFE_FORCE_ALL ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=FORCE
// RUN: env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=UNSAFE_FORCE_ALL ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | env TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL=UNSAFE_FORCE_ALL ascend-opt --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s --check-prefix=FORCE
// COM: TF_AUTO_MIXED_PRECISION_GRAPH_REWRITE_LEVEL (auto_mixed_precision.cc, auto_mixed_precision_lists.h).
// COM: DENY: TF's own test NoInferOp (TREAT_INFER_AS_DENY: the infer ops Sqrt and Log join the deny list),
// COM: with TF's expected dtypes and its 4 casts. TC: TENSOR_CORES_ONLY empties the fp16 infer, deny and clear
// COM: lists, so only the allow ops change (case-insensitive, as TF reads it). FORCE: UNSAFE_FORCE_ALL paints
// COM: every fp32 op with an fp16 kernel and does not propagate deny: one cast in, one cast out; a second
// COM: run changes nothing.

// DENY-LABEL: func.func @no_infer_op
// DENY: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// DENY-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// DENY-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// DENY-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// DENY-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// DENY-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// DENY-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// DENY-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// DENY-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// DENY-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// DENY-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf32>
// DENY-NEXT: func.return

// TC-LABEL: func.func @no_infer_op
// TC: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TC-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TC-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// TC-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// TC-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// TC-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf32>
// TC-NEXT: func.return

// FORCE-LABEL: func.func @no_infer_op
// FORCE-NEXT: ascend.Cast %input : (tensor<32x32xf32>) -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Log {{.*}}"infer3"{{.*}} -> tensor<32x32xf16>
// FORCE-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// FORCE-NEXT: func.return
func.func @no_infer_op(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
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
