//! A Direct agent defined with the macros handles a few instructions; after each one we print
//! the state and the directives it produced.
//!
//! Run it with `cargo run --example direct_cart`.

use stratagem::prelude::*;

/// A shopping cart that runs instructions in order.
#[agent(
    strategy = Direct,
    actions [add_item, remove_item, checkout],
    routes {
        "cart.item.added" => add_item
        "cart.checkout" => checkout
    }
)]
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Cart {
    items: Vec<Item>,
    total: f64,
    checked_out: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
struct Item {
    name: String,
    price: f64,
}

/// Adds an item to the cart.
#[action]
fn add_item(cart: &mut Cart, item: Item) -> Result<(), ActionError> {
    if cart.checked_out {
        return Err(ActionError::new("the cart is already checked out"));
    }
    cart.total += item.price;
    cart.items.push(item);
    Ok(())
}

#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Removal {
    name: String,
}

/// Removes an item by name.
#[action]
fn remove_item(cart: &mut Cart, removal: Removal) -> Result<(), ActionError> {
    let index = cart
        .items
        .iter()
        .position(|i| i.name == removal.name)
        .ok_or_else(|| ActionError::new(format!("`{}` is not in the cart", removal.name)))?;
    let item = cart.items.remove(index);
    cart.total -= item.price;
    Ok(())
}

/// Checks the cart out and announces it.
#[action]
fn checkout(cart: &mut Cart) -> Result<Outcome, ActionError> {
    if cart.items.is_empty() {
        return Err(ActionError::new("cannot check out an empty cart"));
    }
    cart.checked_out = true;
    Ok(Outcome::new().emit(Signal::new(
        "cart.checked_out",
        json!({ "items": cart.items.len(), "total": cart.total }),
    )))
}

fn show(step: &str, agent: &Agent<Cart>, directives: &[Directive]) {
    println!("> {step}");
    let state = agent.state();
    let names: Vec<&str> = state.items.iter().map(|i| i.name.as_str()).collect();
    println!(
        "  state: items {names:?}, total {:.2}, checked out: {}",
        state.total, state.checked_out
    );
    if directives.is_empty() {
        println!("  directives: none");
    }
    for directive in directives {
        match directive {
            Directive::Emit(signal) => println!("  emit `{}` {}", signal.signal_type, signal.data),
            Directive::Error { error, .. } => println!("  error: {error}"),
            other => println!(
                "  {}",
                serde_json::to_string(other).expect("directives serialize")
            ),
        }
    }
}

fn main() {
    let mut cart = Cart::new();

    let out = cart.cmd(Instruction::new(
        "add_item",
        json!({"name": "tea", "price": 4.5}),
    ));
    show("add tea", &cart, &out);

    // Two instructions in one batch: each sees the state the previous one left.
    let out = cart.cmd([
        Instruction::new("add_item", json!({"name": "scones", "price": 3.0})),
        Instruction::new("remove_item", json!({"name": "tea"})),
    ]);
    show("add scones, remove tea", &cart, &out);

    // A failing instruction changes nothing and becomes an Error directive.
    let out = cart.cmd(Instruction::new("remove_item", json!({"name": "jam"})));
    show("remove jam (not in the cart)", &cart, &out);

    // Signals reach actions through routes.
    let out = cart.handle_signal(&Signal::new("cart.checkout", json!({})));
    show("signal `cart.checkout`", &cart, &out);

    let out = cart.cmd(Instruction::new(
        "add_item",
        json!({"name": "milk", "price": 1.2}),
    ));
    show("add milk after checkout", &cart, &out);

    println!(
        "snapshot: {}",
        serde_json::to_string(&cart.snapshot()).expect("snapshot serializes")
    );
}
