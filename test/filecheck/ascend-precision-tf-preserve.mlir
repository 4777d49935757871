// RUN: ascend-opt %s --split-input-file --amp_policy=tf --keep_dtype=%S/Inputs/tf_fetches.txt | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=tf keep-dtype="%S/Inputs/tf_fetches.txt"}' | ascend-opt --split-input-file -p 'ascend-precision{policy=tf keep-dtype="%S/Inputs/tf_fetches.txt"}' | filecheck %s
// COM: TF's PreserveFetches (auto_mixed_precision_test.cc) with the fetch nodes given as a keep_dtype file
// COM: (Inputs/tf_fetches.txt: allow1, clr2, clr3) instead of the `keep_dtype` property: under `tf` the file's
// COM: ops are TF's preserved nodes (MustPreserve: not in should_process_nodes_), never painted allow nor
// COM: entered by the allow passes. TF's expectation: only allow2 is DT_HALF, 2 casts. Without the file,
// COM: allow1, clr1, clr2 and clr3 would be fp16 too (clear ops next to allow1 and allow2).

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
