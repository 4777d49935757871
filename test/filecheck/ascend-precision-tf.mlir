// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf}' | ascend-opt --split-input-file -p 'ascend-precision{policy=tf}' | filecheck %s
// COM: TensorFlow's own tests of grappler's AutoMixedPrecision (auto_mixed_precision_test.cc, AutoMixedPrecisionTest),
// COM: each graph the dialect can express, with TF's expected dtypes (fp16 = DT_HALF) and cast counts.
// COM: TF's fetch nodes are the function results (a fetched Identity: its producer is painted normally);
// COM: TF's preserved fetched nodes are ops marked keep_dtype. The second RUN checks that a second run changes nothing.

// COM: NoOp: no allow op, nothing changes.
// CHECK-LABEL: func.func @no_op
// CHECK-NOT: ascend.Cast
// CHECK: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32xf32>
// CHECK: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32xf32>
// CHECK: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32xf32>
// CHECK: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32xf32>
// CHECK-NEXT: func.return
func.func @no_op(%input: tensor<32xf32>) -> tensor<32xf32> {
  %deny1 = ascend.Exp %input {name = "deny1"} : (tensor<32xf32>) -> tensor<32xf32>
  %clr1 = ascend.Relu %deny1 {name = "clr1"} : (tensor<32xf32>) -> tensor<32xf32>
  %infer1 = ascend.Sqrt %clr1 {name = "infer1"} : (tensor<32xf32>) -> tensor<32xf32>
  %clr2 = ascend.Relu %infer1 {name = "clr2"} : (tensor<32xf32>) -> tensor<32xf32>
  func.return %clr2 : tensor<32xf32>
}

// -----

// COM: AlreadyFp16: the user's casts and fp16 ops stay as written (same node count).
// CHECK-LABEL: func.func @already_fp16
// CHECK-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}}"cst2"{{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @already_fp16(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
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
// CHECK-LABEL: func.func @simple
// CHECK: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Log {{.*}}"infer2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Gelu {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr5"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @simple(%input: tensor<32x32xf32>) -> tensor<32x32xf32> {
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
// CHECK-LABEL: func.func @bidirectional_clear_chain
// CHECK-NEXT: %[[IN:.*]] = ascend.Cast %input : (tensor<32x32xf32>) -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Relu %[[IN]] {{.*}}"clr1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Relu %[[IN]] {{.*}}"clr2"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.ConcatV2D {{.*}}"clr3"{{.*}} -> tensor<64x32xf16>
// CHECK-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @bidirectional_clear_chain(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %clr1 = ascend.Relu %input {name = "clr1"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr2 = ascend.Relu %input {name = "clr2"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %clr1, %clr1 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %clr3 = ascend.ConcatV2D %clr1, %clr2 {concat_dim = 0 : i64, name = "clr3"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %clr4 = ascend.Relu %clr2 {name = "clr4"} : (tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1, %clr4 : tensor<32x32xf32>, tensor<32x32xf32>
}

// -----

// COM: PreserveFetches: the fetched allow1, clr2 and clr3 are preserved (keep_dtype); only allow2 is fp16; 2 casts.
// CHECK-LABEL: func.func @preserve_fetches
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Exp {{.*}}"deny1"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf32>) -> tensor<32x32xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr3"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Exp {{.*}}"deny2"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: ascend.Relu {{.*}}"clr4"{{.*}} -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @preserve_fetches(%input: tensor<32x32xf32>) -> (tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>) {
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
// CHECK-LABEL: func.func @existing_cast
// CHECK-NEXT: ascend.Cast %input {{.*}}"cst1"{{.*}} : (tensor<32x32xi1>) -> tensor<32x32xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<32x32xf16>) -> tensor<32x32xf32>
// CHECK-NEXT: func.return
func.func @existing_cast(%input: tensor<32x32xi1>) -> tensor<32x32xf32> {
  %cst1 = ascend.Cast %input {name = "cst1"} : (tensor<32x32xi1>) -> tensor<32x32xf32>
  %allow1 = ascend.MatMulV2 %cst1, %cst1 {name = "allow1"} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %allow1 : tensor<32x32xf32>
}

// -----

// COM: BatchMatMul: allow; 2 casts.
// CHECK-LABEL: func.func @batch_mat_mul
// CHECK-NEXT: ascend.Cast %input : (tensor<64x32x32xf32>) -> tensor<64x32x32xf16>
// CHECK-NEXT: ascend.BatchMatMul {{.*}}"allow1"{{.*}} -> tensor<64x32x32xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<64x32x32xf16>) -> tensor<64x32x32xf32>
// CHECK-NEXT: func.return
func.func @batch_mat_mul(%input: tensor<64x32x32xf32>) -> tensor<64x32x32xf32> {
  %allow1 = ascend.BatchMatMul %input, %input {name = "allow1"} : (tensor<64x32x32xf32>, tensor<64x32x32xf32>) -> tensor<64x32x32xf32>
  func.return %allow1 : tensor<64x32x32xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Log: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_Log
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Log {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_Log(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Log %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's LogSoftmax: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_LogSoftmaxV2
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.LogSoftmaxV2 {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_LogSoftmaxV2(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.LogSoftmaxV2 %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Sigmoid: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_Sigmoid
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Sigmoid {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_Sigmoid(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Sigmoid %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Softmax: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_SoftmaxV2
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.SoftmaxV2 {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_SoftmaxV2(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.SoftmaxV2 %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Sqrt: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_Sqrt
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Sqrt {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_Sqrt(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Sqrt %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}

// -----

// COM: TestSimpleUnaryInferOp with TF's Tanh: an infer op between two allow ops is fp16; 2 casts.
// CHECK-LABEL: func.func @unary_infer_Tanh
// CHECK-NEXT: ascend.Cast %input : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast %eye : (tensor<128x128xf32>) -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Tanh {{.*}}"infer1"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.MatMulV2 {{.*}}"allow2"{{.*}} -> tensor<128x128xf16>
// CHECK-NEXT: ascend.Cast {{.*}} : (tensor<128x128xf16>) -> tensor<128x128xf32>
// CHECK-NEXT: func.return
func.func @unary_infer_Tanh(%input: tensor<128x128xf32>, %eye: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %allow1 = ascend.MatMulV2 %input, %eye {name = "allow1"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %infer1 = ascend.Tanh %allow1 {name = "infer1"} : (tensor<128x128xf32>) -> tensor<128x128xf32>
  %allow2 = ascend.MatMulV2 %infer1, %eye {name = "allow2"} : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %allow2 : tensor<128x128xf32>
}
