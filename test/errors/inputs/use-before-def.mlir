func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = ascend.Relu %b : (tensor<4xf32>) -> tensor<4xf32>
  %b = ascend.Relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
