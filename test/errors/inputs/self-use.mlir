func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ascend.Add %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
