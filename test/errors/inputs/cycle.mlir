func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ascend.Add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = ascend.Relu %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
