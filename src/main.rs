mod glob;
mod sim;

fn main() {}
