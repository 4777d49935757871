func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = ascend.Const dense<[1.0, 2.0]> : tensor<2xcomplex<f32>>
  func.return %x : tensor<4xf32>
}
