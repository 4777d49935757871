// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=mindspore level=O0}' | filecheck %s --check-prefix=O0
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=mindspore level=O1}' | filecheck %s --check-prefix=O1
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=mindspore level=O2}' | filecheck %s --check-prefix=O2
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=mindspore}' | filecheck %s --check-prefix=O2
// RUN: ascend-opt %s --split-input-file -p 'ascend-precision{policy=mindspore level=O3}' | filecheck %s --check-prefix=O3
// COM: MindSpore's amp levels (amp.py lists). Cells are name scopes in MindSpore full names
// COM: (Default/fc1-Dense/BiasAdd-op1: BiasAdd inside the cell fc1 of class Dense); a listed cell decides every op in it.

// O0-LABEL: func.func @mlp
// O0-NOT: ascend.Cast
// O0: func.return
// O1-LABEL: func.func @mlp
// O1: ascend.MatMulV2 {{.*}}fc1-Dense/MatMul-op0{{.*}} -> tensor<8x32xf16>
// O1: ascend.BiasAdd {{.*}}fc1-Dense/BiasAdd-op1{{.*}} -> tensor<8x32xf16>
// O1: ascend.LayerNorm {{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// O1: ascend.Relu {{.*}} -> tensor<8x32xf16>
// O1: ascend.MatMulV2 {{.*}}fc2-Dense/MatMul-op4{{.*}} -> tensor<8x4xf16>
// O1: ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf32>
// O1: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// O2-LABEL: func.func @mlp
// O2: ascend.MatMulV2 {{.*}} -> tensor<8x32xf16>
// O2: ascend.BiasAdd {{.*}} -> tensor<8x32xf16>
// O2: ascend.LayerNorm {{.*}} -> (tensor<8x32xf32>, tensor<8x1xf32>, tensor<8x1xf32>)
// O2: ascend.Relu {{.*}} -> tensor<8x32xf16>
// O2: ascend.MatMulV2 {{.*}} -> tensor<8x4xf16>
// O2: ascend.SoftmaxV2 {{.*}} -> tensor<8x4xf16>
// O2: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf32>, tensor<8x4xf32>)
// O3-LABEL: func.func @mlp
// O3: ascend.LayerNorm {{.*}} -> (tensor<8x32xf16>, tensor<8x1xf16>, tensor<8x1xf16>)
// O3: ascend.SoftmaxCrossEntropyWithLogits {{.*}} -> (tensor<8xf16>, tensor<8x4xf16>)
func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>, %b1: tensor<32xf32>, %g: tensor<32xf32>, %beta: tensor<32xf32>, %w2: tensor<32x4xf32>, %labels: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8xf32>) {
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
// O1-LABEL: func.func @cnn
// O1: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// O1: ascend.Relu {{.*}} -> tensor<1x4x6x6xf16>
// O1: ascend.Reshape {{.*}} -> tensor<4x36xf32>
// O1: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf32>
// O2-LABEL: func.func @cnn
// O2: ascend.Conv2D {{.*}} -> tensor<1x4x6x6xf16>
// O2: ascend.Relu {{.*}} -> tensor<1x4x6x6xf16>
// O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op2{{.*}} -> tensor<4x36xf32>
// O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op3{{.*}} -> tensor<4x36x1x1xf32>
// O2: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf32>, tensor<36xf32>, tensor<36xf32>)
// O2: ascend.Reshape {{.*}}bn-BatchNorm1d/Reshape-op5{{.*}} -> tensor<4x36xf32>
// O2: ascend.Reshape {{.*}}"flat"{{.*}} -> tensor<144xf16>
// O3-LABEL: func.func @cnn
// O3: ascend.BatchNorm {{.*}} -> (tensor<4x36x1x1xf16>
func.func @cnn(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %s: tensor<36xf32>) -> tensor<144xf32> {
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
// O1-LABEL: func.func @attention
// O1: ascend.BatchMatMulV2 {{.*}}"scores"{{.*}} -> tensor<2x4x4xf16>
// O1: ascend.SoftmaxV2 {{.*}}"probs"{{.*}} -> tensor<2x4x4xf32>
// O1: ascend.BatchMatMulV2 {{.*}}"context"{{.*}} -> tensor<2x4x8xf16>
func.func @attention(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %s = ascend.BatchMatMulV2 %q, %k {adj_x2 = true, name = "scores"} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x4xf32>
  %p = ascend.SoftmaxV2 %s {name = "probs"} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %c = ascend.BatchMatMulV2 %p, %v {name = "context"} : (tensor<2x4x4xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return %c : tensor<2x4x8xf32>
}
