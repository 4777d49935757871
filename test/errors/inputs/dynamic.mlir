func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  %0 = ascend.Relu %x : (tensor<?xf32>) -> tensor<?xf32>
  func.return %0 : tensor<?xf32>
}
