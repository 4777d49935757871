// RUN: xdsl-opt %s -p 'ascend-impl-mode{op-select-implmode=high_performance}' | filecheck %s
// RUN: ascend-opt %s --op_select_implmode high_performance_for_all | filecheck %s --check-prefix=ALL
// RUN: ascend-opt %s --op_select_implmode high_performance --optypelist_for_implmode Relu | filecheck %s --check-prefix=LIST
// RUN: ascend-opt %s --op_precision_mode %S/Inputs/op_precision.ini | filecheck %s --check-prefix=INI
// RUN: ascend-opt %s --op_select_implmode high_performance --precision_mode force_fp16 | filecheck %s --check-prefix=FP16
// RUN: ascend-opt %s -p 'ascend-impl-mode{op-select-implmode=high_performance},ascend-impl-mode{op-select-implmode=high_performance}' | filecheck %s
// RUN: not ascend-opt %s --optypelist_for_implmode Relu 2>&1 | filecheck %s --check-prefix=NEEDS
// COM: ascend-impl-mode records CANN's operator implementation mode as `impl_mode`; high_precision is not written.

func.func @f(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = ascend.Exp %x {name = "exp_a"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %b = ascend.Exp %a {name = "exp_b", impl_mode = "high_performance"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = ascend.Relu %b : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %s = ascend.SoftmaxV2 %r : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %s : tensor<4x8xf32>
}

// CHECK:      ascend.Exp %x {name = "exp_a", impl_mode = "high_performance"}
// CHECK-NEXT: ascend.Exp %a {name = "exp_b", impl_mode = "high_performance"}
// CHECK-NEXT: ascend.Relu %b : (tensor<4x8xf32>)
// CHECK-NEXT: ascend.SoftmaxV2 %r {impl_mode = "high_performance"}

// ALL:      ascend.Exp %x {name = "exp_a", impl_mode = "high_performance"}
// ALL:      ascend.Relu %b {impl_mode = "high_performance"}

// LIST:      ascend.Exp %x {name = "exp_a"} :
// LIST-NEXT: ascend.Exp %a {name = "exp_b", impl_mode = "high_performance"}
// LIST-NEXT: ascend.Relu %b {impl_mode = "high_performance"}
// LIST-NEXT: ascend.SoftmaxV2 %r :

// INI:      ascend.Exp %x {name = "exp_a"} :
// INI-NEXT: ascend.Exp %a {name = "exp_b", impl_mode = "keep_fp16"}
// INI-NEXT: ascend.Relu %b :
// INI-NEXT: ascend.SoftmaxV2 %r {impl_mode = "high_performance"}

// FP16:      ascend.SoftmaxV2 %{{.*}} {impl_mode = "high_performance"} : (tensor<4x8xf16>) -> tensor<4x8xf16>

// NEEDS: ascend-opt: error: --optypelist_for_implmode needs --op_select_implmode (high_precision or high_performance)
