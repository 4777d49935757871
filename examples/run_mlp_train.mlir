// One SGD training step of the 64-128-10 MLP (batch 64): forward, softmax cross-entropy,
// backward and the four parameter updates. Used by the interpreter's tests and timing.
func.func @train_step(%x: tensor<64x64xf32>, %y: tensor<64x10xf32>, %w1: tensor<64x128xf32>, %b1: tensor<128xf32>, %w2: tensor<128x10xf32>, %b2: tensor<10xf32>, %lr: tensor<f32>) -> (tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>) {
  %h = ascend.MatMulV2 %x, %w1 {name = "fc1"} : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %h1 = ascend.BiasAdd %h, %b1 {name = "fc1/bias"} : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
  %a = ascend.Relu %h1 {name = "relu1"} : (tensor<64x128xf32>) -> tensor<64x128xf32>
  %z = ascend.MatMulV2 %a, %w2 {name = "fc2"} : (tensor<64x128xf32>, tensor<128x10xf32>) -> tensor<64x10xf32>
  %z1 = ascend.BiasAdd %z, %b2 {name = "fc2/bias"} : (tensor<64x10xf32>, tensor<10xf32>) -> tensor<64x10xf32>
  %loss, %dz = ascend.SoftmaxCrossEntropyWithLogits %z1, %y {name = "xent"} : (tensor<64x10xf32>, tensor<64x10xf32>) -> (tensor<64xf32>, tensor<64x10xf32>)
  %l = ascend.ReduceMean %loss {name = "loss"} : (tensor<64xf32>) -> tensor<f32>
  %inv = ascend.Const dense<0.015625> : tensor<f32>
  %dzs = ascend.Mul %dz, %inv {name = "xent/mean_grad"} : (tensor<64x10xf32>, tensor<f32>) -> tensor<64x10xf32>
  %db2 = ascend.BiasAddGrad %dzs {name = "fc2/bias_grad"} : (tensor<64x10xf32>) -> tensor<10xf32>
  %dw2 = ascend.MatMulV2 %a, %dzs {name = "fc2/w_grad", transpose_x1 = true} : (tensor<64x128xf32>, tensor<64x10xf32>) -> tensor<128x10xf32>
  %da = ascend.MatMulV2 %dzs, %w2 {name = "fc2/x_grad", transpose_x2 = true} : (tensor<64x10xf32>, tensor<128x10xf32>) -> tensor<64x128xf32>
  %dh = ascend.ReluGrad %da, %h1 {name = "relu1_grad"} : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %db1 = ascend.BiasAddGrad %dh {name = "fc1/bias_grad"} : (tensor<64x128xf32>) -> tensor<128xf32>
  %dw1 = ascend.MatMulV2 %x, %dh {name = "fc1/w_grad", transpose_x1 = true} : (tensor<64x64xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %w1n = ascend.ApplyGradientDescent %w1, %lr, %dw1 {name = "sgd/w1"} : (tensor<64x128xf32>, tensor<f32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %b1n = ascend.ApplyGradientDescent %b1, %lr, %db1 {name = "sgd/b1"} : (tensor<128xf32>, tensor<f32>, tensor<128xf32>) -> tensor<128xf32>
  %w2n = ascend.ApplyGradientDescent %w2, %lr, %dw2 {name = "sgd/w2"} : (tensor<128x10xf32>, tensor<f32>, tensor<128x10xf32>) -> tensor<128x10xf32>
  %b2n = ascend.ApplyGradientDescent %b2, %lr, %db2 {name = "sgd/b2"} : (tensor<10xf32>, tensor<f32>, tensor<10xf32>) -> tensor<10xf32>
  func.return %l, %w1n, %b1n, %w2n, %b2n : tensor<f32>, tensor<64x128xf32>, tensor<128xf32>, tensor<128x10xf32>, tensor<10xf32>
}
