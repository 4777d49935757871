// RUN: ascend-opt %s --split-input-file -p ascend-loss-scale | filecheck %s
// RUN: ascend-opt %s --split-input-file -p 'ascend-loss-scale{manager=fixed scale=128.0 drop-overflow-update=false optimizer=momentum}' | filecheck %s --check-prefix=FIXED
// RUN: ascend-opt %s --split-input-file -p 'ascend-loss-scale{preset=mindspore optimizer=adam lr=0.001}' | filecheck %s --check-prefix=MS
// RUN: ascend-opt %s --split-input-file -p 'ascend-loss-scale{manager=none}' | filecheck %s --check-prefix=NONE
// RUN: not ascend-opt %s --split-input-file -p 'ascend-loss-scale{optimizer=rmsprop}' 2>&1 | filecheck %s --check-prefix=ERR
// COM: @train_step is MindSpore's seven-step flow: clear the float status, forward + backward with the
// COM: seed multiplied by the loss scale, gradients cast to fp32 and unscaled, overflow check, fp32
// COM: update, and on overflow the update is skipped (it runs on a zero gradient with a zero learning
// COM: rate, which leaves the parameters as they were) while the scale backs off.

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %[[X:.*]]: tensor<2x4xf32>, %[[L:.*]]: tensor<2x3xf32>, %[[S:.*]]: tensor<f32>, %[[GOOD:.*]]: tensor<i32>, %[[STEP:.*]]: tensor<i32>)
// CHECK-SAME: -> (tensor<4x3xf32>, tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<i1>)
// CHECK-SAME: ascend.train_step = {params = 1 : i64, state = [], optimizer = "sgd", manager = "dynamic", init_scale = "65536.0"}
// CHECK: %[[ST:.*]] = ascend.NPUAllocFloatStatus
// CHECK-NEXT: %[[CL:.*]] = ascend.NPUClearFloatStatus %[[ST]]
// CHECK-NEXT: ascend.MatMulV2 %[[X]], %[[W]] {name = "fc"}
// CHECK: %[[SEED:.*]] = ascend.Const {{.*}}"gradients/seed"
// CHECK-NEXT: ascend.Mul %[[SEED]], %[[S]] {name = "loss_scale/scale_seed", keep_dtype}
// CHECK: %[[DW:.*]] = ascend.MatMulV2 %[[X]], %{{.*}} {transpose_x1 = true
// CHECK-NEXT: %[[G:.*]] = ascend.RealDiv %[[DW]], %[[S]] {name = "loss_scale/unscale/w", keep_dtype}
// CHECK-NEXT: %[[GOT:.*]] = ascend.NPUGetFloatStatus %[[CL]]
// CHECK-NEXT: %[[SUM:.*]] = ascend.ReduceSum %[[GOT]] {axes = array<i64: 0>, name = "loss_scale/overflow/ReduceSum", keep_dtype} : (tensor<8xf32>) -> tensor<f32>
// CHECK-NEXT: %[[ZERO:.*]] = ascend.Const dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[OV:.*]] = ascend.Greater %[[SUM]], %[[ZERO]] {name = "loss_scale/overflow/Greater", keep_dtype} : (tensor<f32>, tensor<f32>) -> tensor<i1>
// COM: No finite check of the gradients besides the float status (the unscale RealDiv sets it).
// CHECK-NOT: ascend.Mul %[[G]]
// CHECK: %[[Z:.*]] = ascend.Const dense<0.000000e+00> : tensor<f32> {name = "loss_scale/skip_on_overflow/zero_gradient", keep_dtype}
// CHECK-NEXT: %[[G0:.*]] = ascend.SelectV2 %[[OV]], %[[Z]], %[[G]] {name = "loss_scale/skip_on_overflow/w/SelectV2", keep_dtype} : (tensor<i1>, tensor<f32>, tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-NEXT: %[[ZLR:.*]] = ascend.Const dense<0.000000e+00> : tensor<f32> {name = "loss_scale/skip_on_overflow/lr/Const", keep_dtype}
// CHECK-NEXT: %[[LR0:.*]] = ascend.Select %[[OV]], %[[ZLR]], %{{.*}} {name = "loss_scale/skip_on_overflow/lr/Select", keep_dtype}
// CHECK-NEXT: %[[NEWW:.*]] = ascend.ApplyGradientDescent %[[W]], %[[LR0]], %[[G0]]
// CHECK-NEXT: %[[ONE:.*]] = ascend.Const dense<1> : tensor<i32>
// CHECK-NEXT: %[[NEXT:.*]] = ascend.Add %[[STEP]], %[[ONE]]
// CHECK-NEXT: %[[NSTEP:.*]] = ascend.Select %[[OV]], %[[STEP]], %[[NEXT]] {name = "loss_scale/step/Select", keep_dtype}
// CHECK-NEXT: %[[GOOD1:.*]] = ascend.Add %[[GOOD]], %[[ONE]]
// CHECK-NEXT: %[[INTERVAL:.*]] = ascend.Const dense<2000> : tensor<i32> {name = "loss_scale/growth_interval", keep_dtype}
// CHECK-NEXT: %[[COUNTING:.*]] = ascend.Greater %[[INTERVAL]], %[[GOOD1]] {{.*}} : (tensor<i32>, tensor<i32>) -> tensor<i1>
// CHECK-NEXT: %[[ZEROI:.*]] = ascend.Const dense<0> : tensor<i32>
// CHECK-NEXT: %[[KEPT:.*]] = ascend.Select %[[COUNTING]], %[[GOOD1]], %[[ZEROI]]
// CHECK-NEXT: %[[NGOOD:.*]] = ascend.Select %[[OV]], %[[ZEROI]], %[[KEPT]]
// CHECK-NEXT: %[[GF:.*]] = ascend.Const dense<2.000000e+00> : tensor<f32> {name = "loss_scale/growth_factor", keep_dtype}
// CHECK-NEXT: %[[UP:.*]] = ascend.Mul %[[S]], %[[GF]]
// CHECK-NEXT: %[[GROWN:.*]] = ascend.Select %[[COUNTING]], %[[S]], %[[UP]]
// CHECK-NEXT: %[[BF:.*]] = ascend.Const dense<5.000000e-01> : tensor<f32> {name = "loss_scale/backoff_factor", keep_dtype}
// CHECK-NEXT: %[[DOWN:.*]] = ascend.Mul %[[S]], %[[BF]]
// CHECK-NOT: min_scale
// CHECK-NEXT: %[[NS:.*]] = ascend.Select %[[OV]], %[[DOWN]], %[[GROWN]] {name = "loss_scale/update_scale/Select_1", keep_dtype}
// CHECK-NEXT: func.return %[[NEWW]], %{{.*}}, %[[NS]], %[[NGOOD]], %[[NSTEP]], %[[OV]]

// COM: The fixed manager without drop-overflow-update always applies the update: no Select, the scale
// COM: and counter pass through, the step always advances; the overflow flag is still returned.
// FIXED-LABEL: func.func @train_step
// FIXED-SAME: (%w: tensor<4x3xf32>, %w_accum: tensor<4x3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>, %loss_scale: tensor<f32>, %good_steps: tensor<i32>, %step: tensor<i32>)
// FIXED-SAME: state = ["zeros:0"], optimizer = "momentum", manager = "fixed", init_scale = "128.0"
// FIXED: %[[OV:.*]] = ascend.Greater
// FIXED: %[[NW:.*]], %[[NACC:.*]] = ascend.ApplyMomentumD %w, %w_accum,
// FIXED-NOT: ascend.Select
// FIXED: %[[NSTEP:.*]] = ascend.Add %step, %{{.*}} {name = "loss_scale/step/Add", keep_dtype}
// FIXED-NOT: ascend.Select
// FIXED: func.return %[[NW]], %[[NACC]], %{{.*}}, %loss_scale, %good_steps, %[[NSTEP]], %[[OV]] :

// COM: MindSpore's preset: init 2^24, floor 1; Adam's beta powers are state and advance per step.
// MS-LABEL: func.func @train_step
// MS-SAME: %w_m: tensor<4x3xf32>, %w_v: tensor<4x3xf32>, %beta1_power: tensor<f32>, %beta2_power: tensor<f32>
// MS-SAME: state = ["zeros:0", "zeros:0", "value:0.9", "value:0.999"], optimizer = "adam", manager = "dynamic", init_scale = "16777216.0"
// MS: ascend.Const dense<1.000000e-03> : tensor<f32> {name = "optimizer/lr", keep_dtype}
// MS: %[[Z:.*]] = ascend.Const dense<-0.000000e+00> : tensor<f32> {name = "loss_scale/skip_on_overflow/zero_gradient", keep_dtype}
// MS: %[[B1:.*]] = ascend.Select %[[OV:.*]], %{{.*}}, %{{.*}} {name = "loss_scale/skip_on_overflow/beta1/Select", keep_dtype}
// MS: %[[B2:.*]] = ascend.Select %[[OV]], %{{.*}}, %{{.*}} {name = "loss_scale/skip_on_overflow/beta2/Select", keep_dtype}
// MS: ascend.ApplyAdamD %w, %w_m, %w_v, %beta1_power, %beta2_power, %{{.*}}, %[[B1]], %[[B2]], %{{.*}}, %{{.*}}
// MS: %[[B1P:.*]] = ascend.Mul %beta1_power, %[[B1]] {name = "optimizer/beta_power/Mul", keep_dtype}
// MS: {name = "loss_scale/backoff_factor", keep_dtype}
// MS-NEXT: %[[DOWN:.*]] = ascend.Mul %loss_scale
// MS-NEXT: %[[FLOOR:.*]] = ascend.Const dense<1.000000e+00> : tensor<f32> {name = "loss_scale/min_scale", keep_dtype}
// MS-NEXT: %[[BACKED:.*]] = ascend.Maximum %[[DOWN]], %[[FLOOR]]
// MS-NEXT: ascend.Select %[[OV]], %[[BACKED]], %{{.*}} {name = "loss_scale/update_scale/Select_1", keep_dtype}

// COM: Without a manager the scale is 1: the seed is not multiplied, the gradients are not divided, the
// COM: update is always applied and the scale passes through; the overflow flag is still returned.
// NONE-LABEL: func.func @train_step
// NONE-NOT: loss_scale/scale_seed
// NONE: %[[DW:.*]] = ascend.MatMulV2 %x, %{{.*}} {transpose_x1 = true
// NONE-NOT: ascend.RealDiv
// NONE: %[[OV:.*]] = ascend.Greater
// NONE: %[[NW:.*]] = ascend.ApplyGradientDescent %w, %{{.*}}, %[[DW]]
// NONE-NOT: ascend.Select
// NONE: %[[NSTEP:.*]] = ascend.Add %step
// NONE-NEXT: func.return %[[NW]], %{{.*}}, %loss_scale, %good_steps, %[[NSTEP]], %[[OV]]

// ERR: ascend-opt: error: ascend-loss-scale: optimizer must be one of sgd, momentum, adam, got 'rmsprop'
func.func @forward(%w: tensor<4x3xf32>, %x: tensor<2x4xf32>, %labels: tensor<2x3xf32>) -> tensor<f32> {
  %y = ascend.MatMulV2 %x, %w {name = "fc"} : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %y, %labels : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2x3xf32>)
  %m = ascend.ReduceMean %l {axes = array<i64: 0>, name = "loss"} : (tensor<2xf32>) -> tensor<f32>
  func.return %m : tensor<f32>
}

// -----

// COM: An fp16 forward (e.g. after ascend-precision): fp32 master weights are cast for it, the scale is
// COM: cast for the fp16 seed, and the fp16 gradients are cast to fp32 before unscaling.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:.*]]: tensor<4x3xf32>, %{{.*}}: tensor<2x4xf16>
// CHECK: %[[WH:.*]] = ascend.Cast %[[W]] {keep_dtype} : (tensor<4x3xf32>) -> tensor<4x3xf16>
// CHECK: ascend.MatMulV2 %{{.*}}, %[[WH]]
// CHECK: %[[SEED:.*]] = ascend.Const dense<1.000000e+00> : tensor<f16> {name = "gradients/seed", keep_dtype}
// CHECK-NEXT: %[[SH:.*]] = ascend.Cast %{{.*}} {keep_dtype} : (tensor<f32>) -> tensor<f16>
// CHECK-NEXT: ascend.Mul %[[SEED]], %[[SH]] {name = "loss_scale/scale_seed", keep_dtype} : (tensor<f16>, tensor<f16>) -> tensor<f16>
// CHECK: %[[G32:.*]] = ascend.Cast %{{.*}} {keep_dtype} : (tensor<4x3xf16>) -> tensor<4x3xf32>
// CHECK-NEXT: ascend.RealDiv %[[G32]], %{{.*}} {name = "loss_scale/unscale/w", keep_dtype}
func.func @forward(%w: tensor<4x3xf16>, %x: tensor<2x4xf16>, %labels: tensor<2x3xf16>) -> tensor<f16> {
  %y = ascend.MatMulV2 %x, %w : (tensor<2x4xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
  %l, %bp = ascend.SoftmaxCrossEntropyWithLogits %y, %labels : (tensor<2x3xf16>, tensor<2x3xf16>) -> (tensor<2xf16>, tensor<2x3xf16>)
  %m = ascend.ReduceMean %l {axes = array<i64: 0>} : (tensor<2xf16>) -> tensor<f16>
  func.return %m : tensor<f16>
}
