// Flat invocation index for 1D work split over a 2D grid (x is capped by maxComputeWorkGroupCount).
// 64 invocations a workgroup (WORKGROUP, engine/vk/program.h); specialisation constant 1 narrows them to a CPU driver's
// vector width for a dispatch's last, partial workgroup (Program::dispatch). Nothing here may depend on the size.
layout(local_size_x = 64, local_size_x_id = 1) in;
uint gid() { return gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x + gl_GlobalInvocationID.x; }
