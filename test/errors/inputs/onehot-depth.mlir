func.func @f(%i: tensor<4xi32>, %on: tensor<f32>, %off: tensor<f32>) -> tensor<4x1000000000000xf32> {
  %oh = ascend.OneHot %i, %on, %off {depth = 1000000000000 : i64} : (tensor<4xi32>, tensor<f32>, tensor<f32>) -> tensor<4x1000000000000xf32>
  func.return %oh : tensor<4x1000000000000xf32>
}
