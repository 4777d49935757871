func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ascend.Relu %x {transpose_x1 = 3} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ascend.MatMulV2 %x, %x {transpose_x1 = "yes"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
