// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf amp_dtype=bf16 soc=ascend910b}' | filecheck %s
// COM: TensorFlow's bf16 tests of AutoMixedPrecision (auto_mixed_precision_test.cc, AutoMixedPrecisionMklTest:
// COM: the oneDNN lists, where Mean and Sum are infer ops and infer ops right after an allow op become allow).

// COM: AlreadyBf16: nothing changes.
// CHECK-LABEL: func.func @already_bf16
// CHECK-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.Cast {{.*}}"cst2"{{.*}} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @already_bf16(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %cst1 = ascend.Cast %input {name = "cst1"} : (tensor<32x32xf32>) -> tensor<32x32xbf16>
  %allow1 = ascend.MatMulV2 %cst1, %cst1 {name = "allow1"} : (tensor<32x32xbf16>, tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %clr1 = ascend.Relu %allow1 {name = "clr1"} : (tensor<32x32xbf16>) -> tensor<32x32xbf16>
  %cst2 = ascend.Cast %clr1 {name = "cst2"} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %cst2 {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %clr2 : tensor<32x32xf32>
}

// -----

// COM: Simple (oneDNN): as the fp16 case, Log (here deny2, an infer op) not between allow ops stays fp32; 2 casts.
// CHECK-LABEL: func.func @simple
// CHECK: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xbf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xbf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Log {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Gelu {{.*}}"deny3"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr5"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
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
// CHECK-LABEL: func.func @infer_follow_upstream_allow
// CHECK-NEXT: ascend.Cast %input1 : {{.*}} -> tensor<8x56x56x16xbf16>
// CHECK-NEXT: ascend.Cast %weight : {{.*}} -> tensor<3x3x16x16xbf16>
// CHECK-NEXT: ascend.Conv2D {{.*}}"allow"{{.*}} -> tensor<8x56x56x16xbf16>
// CHECK-NEXT: ascend.Cast %input2 : (tensor<16xf32>) -> tensor<16xbf16>
// CHECK-NEXT: ascend.BiasAdd {{.*}}"infer"{{.*}} -> tensor<8x56x56x16xbf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr"{{.*}} -> tensor<8x56x56x16xbf16>
// CHECK-NEXT: ascend.Cast {{.*}} -> tensor<8x56x56x16xf32>
// CHECK-NEXT: func.return
func.func @infer_follow_upstream_allow(%input1: tensor<8x56x56x16xf32>, %weight: tensor<3x3x16x16xf32>, %input2: tensor<16xf32>) -> tensor<8x56x56x16xf32> {
  %allow = ascend.Conv2D %input1, %weight {strides = array<i64: 1, 1, 1, 1>, pads = array<i64: 1, 1, 1, 1>, data_format = "NHWC", name = "allow"} : (tensor<8x56x56x16xf32>, tensor<3x3x16x16xf32>) -> tensor<8x56x56x16xf32>
  %infer = ascend.BiasAdd %allow, %input2 {data_format = "NHWC", name = "infer"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %clr = ascend.Relu %infer {name = "clr"} : (tensor<8x56x56x16xf32>) -> tensor<8x56x56x16xf32>
  func.return %clr : tensor<8x56x56x16xf32>
}

// -----

// COM: InferFollowUpStreamDeny: no allow op, nothing changes.
// CHECK-LABEL: func.func @infer_follow_upstream_deny
// CHECK-NOT: ascend.Cast
// CHECK: ascend.Pow {{.*}}"deny"{{.*}} -> tensor<8x56x56x16xf32>
// CHECK-NEXT: ascend.BiasAdd {{.*}}"infer"{{.*}} -> tensor<8x56x56x16xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr"{{.*}} -> tensor<8x56x56x16xf32>
// CHECK-NEXT: func.return
func.func @infer_follow_upstream_deny(%input1: tensor<8x56x56x16xf32>, %input2: tensor<16xf32>, %input3: tensor<16xf32>) -> tensor<8x56x56x16xf32> {
  %deny = ascend.Pow %input1, %input2 {name = "deny"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %infer = ascend.BiasAdd %deny, %input3 {data_format = "NHWC", name = "infer"} : (tensor<8x56x56x16xf32>, tensor<16xf32>) -> tensor<8x56x56x16xf32>
  %clr = ascend.Relu %infer {name = "clr"} : (tensor<8x56x56x16xf32>) -> tensor<8x56x56x16xf32>
  func.return %clr : tensor<8x56x56x16xf32>
}
