// RUN: not ascend-opt %s --split-input-file -p ascend-autodiff 2>/dev/null | filecheck %s
// RUN: not ascend-opt %s --split-input-file -p ascend-autodiff 2>&1 >/dev/null | filecheck %s --check-prefix=ERR
// COM: @forward(params..., inputs, labels) -> loss gains @forward_grad(same args) -> (loss, dparams...);
// COM: by default every argument but the last two is differentiated. The last case has no gradient
// COM: rule, so ascend-opt fails there (after printing the cases before it).

// COM: Dense + ReLU + softmax cross-entropy: the forward stays as it is, the copy is followed by the backward.
// COM: The loss ops (SoftmaxCrossEntropyWithLogits and the ReduceMean after it), the seed and the loss's
// COM: gradient ops are marked keep_dtype (fp32 under every precision mode); the network's are not.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: gradients
// CHECK-NOT: keep_dtype
// CHECK: func.return
// CHECK-LABEL: func.func @forward_grad
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[B:.*]]: tensor<3xf32>, %[[X:.*]]: tensor<2x4xf32>, %[[L:.*]]: tensor<2x3xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3xf32>)
// CHECK: %[[Z:.*]] = ascend.BiasAdd
// CHECK: %{{.*}}, %[[BP:.*]] = ascend.SoftmaxCrossEntropyWithLogits %{{.*}}, %{{.*}} {keep_dtype} :
// CHECK: %[[LOSS:.*]] = ascend.ReduceMean %{{.*}} {axes = array<i64: 0>, name = "loss", keep_dtype} :
// CHECK: %[[SEED:.*]] = ascend.Const dense<1.000000e+00> : tensor<f32> {name = "gradients/seed", keep_dtype}
// CHECK: ascend.RealDiv {{.*}}name = "gradients/loss_grad/RealDiv", keep_dtype}
// CHECK: %[[DZ:.*]] = ascend.Mul %[[BP]], %{{[^ ]*}} {name = "gradients/SoftmaxCrossEntropyWithLogits_grad/Mul", keep_dtype} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK: %[[DR:.*]] = ascend.ReluGrad %[[DZ]], %[[Z]] {name = "gradients/relu_grad/ReluGrad"}
// CHECK: %[[DB:.*]] = ascend.BiasAddGrad %[[DR]] {{.*}} -> tensor<3xf32>
// CHECK-NOT: transpose_x2
// CHECK: %[[DW:.*]] = ascend.MatMulV2 %[[X]], %[[DR]] {transpose_x1 = true, name = "gradients/fc_grad/MatMulV2"} : (tensor<2x4xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: func.return %[[LOSS]], %[[DW]], %[[DB]] : tensor<f32>, tensor<4x3xf32>, tensor<3xf32>
func.func @forward(%w: tensor<4x3xf32>, %b: tensor<3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>) -> tensor<f32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %z = ascend.BiasAdd %y, %b {name = "fc/bias"} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = ascend.Relu %z {name = "relu"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %r, %labels : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %m = ascend.ReduceMean %l {axes = array<i64: 0>, name = "loss"} : (tensor<2xf32>) -> tensor<f32>
  func.return %m : tensor<f32>
}

// -----

// COM: Conv2D + MaxPool: MaxPoolGrad routes to the maxima, Conv2DBackpropFilter gives the filter's
// COM: gradient; the input is not differentiated, so there is no Conv2DBackpropInput.
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[C:.*]] = ascend.Conv2D %[[X:[^,]*]], %[[W:[^ ]*]]
// CHECK: %[[P:.*]] = ascend.MaxPool %[[C]]
// CHECK: %[[DP:.*]] = ascend.Reshape %{{.*}} : (tensor<2x4xf32>) -> tensor<2x4x1x1xf32>
// CHECK: %[[DC:.*]] = ascend.MaxPoolGrad %[[C]], %[[P]], %[[DP]] {ksize = array<i64: 1, 1, 4, 4>, strides = array<i64: 1, 1, 4, 4>
// CHECK-NOT: Conv2DBackpropInput
// CHECK: %[[DW:.*]] = ascend.Conv2DBackpropFilter %[[X]], %[[DC]] {filter_size = array<i64: 4, 1, 3, 3>, strides = array<i64: 1, 1, 1, 1>
// CHECK: func.return %{{.*}}, %[[DW]] : tensor<f32>, tensor<4x1x3x3xf32>
func.func @forward(%w: tensor<4x1x3x3xf32>, %x: tensor<2x1x6x6xf32>, %labels: tensor<2x4xf32>) -> tensor<f32> {
  %c = ascend.Conv2D %x, %w {strides = array<i64: 1, 1, 1, 1>} : (tensor<2x1x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<2x4x4x4xf32>
  %p = ascend.MaxPool %c {ksize = array<i64: 1, 1, 4, 4>, strides = array<i64: 1, 1, 4, 4>} : (tensor<2x4x4x4xf32>) -> tensor<2x4x1x1xf32>
  %f = ascend.Reshape %p : (tensor<2x4x1x1xf32>) -> tensor<2x4xf32>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %f, %labels : (tensor<2x4xf32>, tensor<2x4xf32>) -> (tensor<2xf32>, tensor<2x4xf32>)
  %m = ascend.ReduceSum %l {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
  func.return %m : tensor<f32>
}

// -----

// COM: A value used twice accumulates with Add; Cast gradients are cast back to the input dtype;
// COM: a broadcast operand's gradient is summed over the broadcast dimension.
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[SEED:.*]] = ascend.Const {{.*}}"gradients/seed"
// COM: Without a loss function the op that returns the loss (the Cast) is the loss op: kept, with its gradient.
// CHECK: ascend.Cast %[[SEED]] {name = "gradients/Cast_grad/Cast", keep_dtype} : (tensor<f32>) -> tensor<f16>
// CHECK: %[[G1:[0-9]+]] = ascend.Mul {{.*}}"gradients/Mul_grad/Mul"
// CHECK: %[[G2:[0-9]+]] = ascend.Mul {{.*}}"gradients/Mul_grad/Mul_1"
// CHECK: %[[SUM:.*]] = ascend.Add %[[G1]], %[[G2]] {name = "gradients/Mul_grad/Add"}
// CHECK: %[[G32:.*]] = ascend.Cast %[[SUM]] {{.*}} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: %[[R:.*]] = ascend.ReduceSum %[[G32]] {axes = array<i64: 0>, keep_dims = true, name = "gradients/Add_grad/ReduceSum"} : (tensor<2x3xf32>) -> tensor<1x3xf32>
// CHECK: %[[DA:.*]] = ascend.Reshape %[[R]] {{.*}} : (tensor<1x3xf32>) -> tensor<3xf32>
// CHECK: func.return %{{.*}}, %[[DA]]
func.func @forward(%a: tensor<3xf32>, %x: tensor<2x3xf32>, %unused: tensor<2x3xf32>) -> tensor<f32> {
  %s = ascend.Add %x, %a : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %h = ascend.Cast %s : (tensor<2x3xf32>) -> tensor<2x3xf16>
  %sq = ascend.Mul %h, %h : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %l = ascend.ReduceSum %sq {axes = array<i64: 0, 1>} : (tensor<2x3xf16>) -> tensor<f16>
  %o = ascend.Cast %l : (tensor<f16>) -> tensor<f32>
  func.return %o : tensor<f32>
}

// -----

// COM: An argument the loss does not depend on gets a zero gradient.
// CHECK-LABEL: func.func @forward_grad
// CHECK: %[[Z:.*]] = ascend.Const dense<0.000000e+00> : tensor<5xf32> {name = "gradients/zeros_1"}
// CHECK: func.return %{{.*}}, %{{.*}}, %[[Z]] : tensor<f32>, tensor<4xf32>, tensor<5xf32>
func.func @forward(%a: tensor<4xf32>, %b: tensor<5xf32>, %x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %e = ascend.Exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %l = ascend.ReduceSum %e {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}

// -----

// COM: GeluGrad (a gradient op) has no gradient rule: a one-line error naming the op and its location.
// ERR: ascend-opt: error: {{.*}}ascend-autodiff.mlir:[[# @LINE + 3]]:3: ascend-autodiff: no gradient rule for ascend.GeluGrad
func.func @forward(%x: tensor<4xf32>, %dy: tensor<4xf32>, %unused: tensor<4xf32>, %labels: tensor<4xf32>) -> tensor<f32> {
  %y = ascend.Gelu %x : (tensor<4xf32>) -> tensor<4xf32>
  %g = ascend.GeluGrad %dy, %x, %y : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = ascend.ReduceSum %g {axes = array<i64: 0>} : (tensor<4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
