// ascend-store-low-weights: a Const whose every use is a Cast to one lower float dtype becomes a Const of that
// dtype, rounded to nearest even as the Cast would round (0.1 -> 0.0999756, 65519 -> 65504, as numpy's float16);
// a Const with any other use, or with Casts to two dtypes, stays. A second run changes nothing.
// RUN: ascend-opt %s -p ascend-store-low-weights | filecheck %s
// RUN: ascend-opt %s -p ascend-store-low-weights,ascend-store-low-weights | filecheck %s

func.func @only_casts(%x: tensor<3xf16>) -> (tensor<3xf16>, tensor<3xf16>) {
  %w = ascend.Const dense<[1.0, 0.1, 65519.0]> : tensor<3xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>
  %h2 = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>
  %y = ascend.Add %x, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %z = ascend.Mul %x, %h2 : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  func.return %y, %z : tensor<3xf16>, tensor<3xf16>
}

// CHECK-LABEL: func.func @only_casts
// CHECK-NEXT:    %w = ascend.Const dense<[1.000000e+00, 9.997560e-02, 6.550400e+04]> : tensor<3xf16> {name = "w"}
// CHECK-NOT:     ascend.Cast
// CHECK-NEXT:    %y = ascend.Add %x, %w
// CHECK-NEXT:    %z = ascend.Mul %x, %w

func.func @also_used_in_fp32(%x: tensor<3xf16>, %a: tensor<3xf32>) -> (tensor<3xf16>, tensor<3xf32>) {
  %w = ascend.Const dense<[1.0, 0.1, 2.0]> : tensor<3xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>
  %y = ascend.Add %x, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %z = ascend.Add %a, %w : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %y, %z : tensor<3xf16>, tensor<3xf32>
}

// CHECK-LABEL: func.func @also_used_in_fp32
// CHECK-NEXT:    %w = ascend.Const {{.*}} : tensor<3xf32> {name = "w"}
// CHECK-NEXT:    %h = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>

func.func @two_low_dtypes(%x: tensor<3xf16>, %b: tensor<3xbf16>) -> (tensor<3xf16>, tensor<3xbf16>) {
  %w = ascend.Const dense<[1.0, 0.1, 2.0]> : tensor<3xf32> {name = "w"}
  %h = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>
  %g = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xbf16>
  %y = ascend.Add %x, %h : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xf16>
  %z = ascend.Add %b, %g : (tensor<3xbf16>, tensor<3xbf16>) -> tensor<3xbf16>
  func.return %y, %z : tensor<3xf16>, tensor<3xbf16>
}

// CHECK-LABEL: func.func @two_low_dtypes
// CHECK-NEXT:    %w = ascend.Const {{.*}} : tensor<3xf32> {name = "w"}
// CHECK-NEXT:    %h = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xf16>
// CHECK-NEXT:    %g = ascend.Cast %w : (tensor<3xf32>) -> tensor<3xbf16>
