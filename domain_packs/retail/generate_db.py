"""Seeded generator of the retail database (`data/db.json`): users, products with variants, orders.

`python -m tau_emotion.domain_packs.retail.generate_db --seed 0` rewrites the shipped file. Every
draw comes from one `random.Random(seed)`, so a seed always gives the same database.
"""

from __future__ import annotations

import argparse
import json
import random
from importlib.resources import files

FIRST = ["Mia", "Noah", "Olivia", "Liam", "Ava", "Ethan", "Sofia", "Lucas", "Isabella", "Mason", "Amelia", "Yusuf",
         "Harper", "Omar", "Aisha", "Daniel", "Chen", "Priya", "Mateo", "Fatima", "Ivan", "Lena", "Kai", "Nora",
         "Raj", "Elena", "Juan", "Yara", "Sam", "Zoe", "Hiro", "Anya", "Leo", "Maya", "Arjun", "Ines"]
LAST = ["Garcia", "Nguyen", "Smith", "Patel", "Kim", "Cohen", "Rossi", "Silva", "Khan", "Muller", "Lopez", "Brown",
        "Ito", "Novak", "Okafor", "Hansen", "Dubois", "Moreno", "Sato", "Ali", "Johnson", "Wilson", "Ahmed", "Lee"]
CITIES = [("Denver", "CO", "802"), ("Austin", "TX", "787"), ("Seattle", "WA", "981"), ("Boston", "MA", "021"),
          ("Chicago", "IL", "606"), ("Phoenix", "AZ", "850"), ("Portland", "OR", "972"), ("Atlanta", "GA", "303"),
          ("Miami", "FL", "331"), ("Columbus", "OH", "432"), ("San Diego", "CA", "921"), ("Nashville", "TN", "372")]
STREETS = ["Main St", "Oak Ave", "Maple Dr", "Cedar Ln", "Pine St", "Elm St", "Lake Rd", "Hill St", "River Rd",
           "Park Ave", "Sunset Blvd", "Willow Way"]
BRANDS = ["visa", "mastercard", "amex", "discover"]
# product type -> {option: values}, and a base price
PRODUCTS = {
    "T-Shirt": ({"color": ["black", "white", "blue", "red"], "size": ["S", "M", "L", "XL"]}, 25),
    "Running Shoes": ({"size": ["8", "9", "10", "11"], "color": ["black", "grey", "orange"]}, 95),
    "Backpack": ({"color": ["black", "green", "navy"], "size": ["small", "medium", "large"]}, 70),
    "Water Bottle": ({"capacity": ["500ml", "750ml", "1000ml"], "material": ["steel", "plastic", "glass"]}, 18),
    "Desk Lamp": ({"color": ["white", "black", "silver"], "power source": ["USB", "AC adapter", "battery"]}, 40),
    "Wireless Earbuds": ({"color": ["black", "white", "blue"], "battery life": ["6 hours", "8 hours", "10 hours"]}, 120),
    "Coffee Maker": ({"capacity": ["4 cups", "8 cups", "12 cups"], "type": ["drip", "espresso", "french press"]}, 85),
    "Yoga Mat": ({"thickness": ["4mm", "6mm", "8mm"], "color": ["purple", "blue", "green", "pink"]}, 30),
    "Bluetooth Speaker": ({"color": ["black", "red", "blue"], "water resistance": ["yes", "no"]}, 60),
    "Office Chair": ({"material": ["mesh", "leather", "fabric"], "color": ["black", "grey", "blue"]}, 210),
    "Laptop Stand": ({"material": ["aluminium", "wood"], "adjustable": ["yes", "no"]}, 45),
    "Electric Kettle": ({"capacity": ["1L", "1.5L", "1.7L"], "material": ["steel", "glass", "plastic"]}, 38),
    "Sunglasses": ({"frame": ["black", "tortoise", "gold"], "lens": ["polarized", "standard"]}, 75),
    "Hiking Boots": ({"size": ["8", "9", "10", "11", "12"], "waterproof": ["yes", "no"]}, 140),
    "Wristwatch": ({"strap": ["leather", "metal", "silicone"], "dial": ["black", "white", "blue"]}, 160),
    "Notebook": ({"size": ["A5", "A4"], "cover": ["hard", "soft"], "paper": ["lined", "plain", "dotted"]}, 12),
    "Tablet": ({"storage": ["64GB", "128GB", "256GB"], "color": ["black", "silver", "gold"]}, 330),
    "Skateboard": ({"deck": ["maple", "bamboo", "plastic"], "length": ["28 inch", "31 inch", "34 inch"]}, 80),
    "Air Purifier": ({"room size": ["small", "medium", "large"], "filter": ["HEPA", "carbon"]}, 150),
    "Mechanical Keyboard": ({"switch": ["red", "blue", "brown"], "layout": ["full", "tenkeyless"],
                             "backlight": ["RGB", "white", "none"]}, 110),
}
STATUSES = ["pending"] * 6 + ["processed"] * 4 + ["delivered"] * 8 + ["cancelled"] * 2 + ["return requested", "exchange requested"]


def _id(rng: random.Random, digits: int) -> str:
    return str(rng.randrange(10 ** (digits - 1), 10**digits))


def _address(rng: random.Random) -> dict:
    city, state, prefix = rng.choice(CITIES)
    return {"address1": f"{rng.randrange(10, 9999)} {rng.choice(STREETS)}",
            "address2": rng.choice(["", "", f"Suite {rng.randrange(100, 999)}", f"Apt {rng.randrange(1, 99)}"]),
            "city": city, "state": state, "country": "USA", "zip": f"{prefix}{rng.randrange(10, 99)}"}


def _products(rng: random.Random) -> dict:
    products, seen = {}, set()
    for name, (options, base) in PRODUCTS.items():
        pid = _id(rng, 10)
        combos = [{}]
        for option, values in options.items():
            combos = [{**c, option: v} for c in combos for v in values]
        variants = {}
        for combo in combos:
            item_id = _id(rng, 10)
            while item_id in seen:
                item_id = _id(rng, 10)
            seen.add(item_id)
            variants[item_id] = {"item_id": item_id, "options": combo,
                                 "available": rng.random() < 0.75,
                                 "price": round(base * rng.uniform(0.7, 1.7), 2)}
        products[pid] = {"product_id": pid, "name": name, "variants": variants}
    return products


def _payment_methods(rng: random.Random) -> dict:
    methods = {}
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        kind = rng.choice(["credit_card", "credit_card", "paypal", "gift_card"])
        pid = f"{kind}_{_id(rng, 7)}"
        if kind == "credit_card":
            methods[pid] = {"source": "credit_card", "id": pid, "brand": rng.choice(BRANDS),
                            "last_four": _id(rng, 4)}
        elif kind == "paypal":
            methods[pid] = {"source": "paypal", "id": pid}
        else:
            methods[pid] = {"source": "gift_card", "id": pid, "balance": rng.randrange(0, 300)}
    if not any(m["source"] != "gift_card" for m in methods.values()):
        pid = f"credit_card_{_id(rng, 7)}"
        methods[pid] = {"source": "credit_card", "id": pid, "brand": rng.choice(BRANDS), "last_four": _id(rng, 4)}
    return methods


def generate(seed: int = 0, n_users: int = 500, n_orders: int = 2000) -> dict:
    rng = random.Random(seed)
    products = _products(rng)
    users: dict = {}
    taken = set()
    while len(users) < n_users:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        address = _address(rng)
        if (first, last, address["zip"]) in taken:
            continue
        taken.add((first, last, address["zip"]))
        uid = f"{first.lower()}_{last.lower()}_{_id(rng, 4)}"
        if uid in users:
            continue
        users[uid] = {"user_id": uid, "name": {"first_name": first, "last_name": last}, "address": address,
                      "email": f"{first.lower()}.{last.lower()}{_id(rng, 4)}@example.com",
                      "payment_methods": _payment_methods(rng), "orders": []}
    user_ids = list(users)
    orders: dict = {}
    product_list = list(products.values())
    while len(orders) < n_orders:
        oid = f"#W{_id(rng, 7)}"
        if oid in orders:
            continue
        uid = rng.choice(user_ids)
        user = users[uid]
        items = []
        for product in rng.sample(product_list, rng.choice([1, 1, 2, 2, 3, 4, 5])):
            variant = rng.choice(list(product["variants"].values()))
            items.append({"name": product["name"], "product_id": product["product_id"], "item_id": variant["item_id"],
                          "price": variant["price"], "options": dict(variant["options"])})
        total = round(sum(i["price"] for i in items), 2)
        usable = [m for m in user["payment_methods"].values()
                  if m["source"] != "gift_card" or m["balance"] >= total]
        payment_id = rng.choice(usable)["id"]
        status = rng.choice(STATUSES)
        history = [{"transaction_type": "payment", "amount": total, "payment_id": payment_id}]
        order = {"order_id": oid, "user_id": uid, "address": dict(rng.choice([user["address"], _address(rng)])),
                 "items": items, "status": status, "payment_history": history}
        if status == "return requested":
            returned = items[:1]
            refund = returned[0]["price"]
            order["return"] = {"item_ids": [returned[0]["item_id"]], "payment_method_id": payment_id, "refund": refund}
            history.append({"transaction_type": "refund", "amount": refund, "payment_id": payment_id})
        if status == "exchange requested":
            item = items[0]
            other = next(v for v in products[item["product_id"]]["variants"] if v != item["item_id"])
            order["exchange"] = {"item_ids": [item["item_id"]], "new_item_ids": [other],
                                 "payment_method_id": payment_id, "price_difference": 0}
        if status != "pending" and status != "cancelled":
            order["fulfillments"] = [{"tracking_id": [_id(rng, 12)], "item_ids": [i["item_id"] for i in items]}]
        if status == "cancelled":
            history.append({"transaction_type": "refund", "amount": total, "payment_id": payment_id})
            order["cancel_reason"] = rng.choice(["no longer needed", "ordered by mistake"])
        orders[oid] = order
        user["orders"].append(oid)
    return {"users": users, "products": products, "orders": orders}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="where to write (default: the pack's data/db.json)")
    args = parser.parse_args(argv)
    out = args.out or str(files("tau_emotion.domain_packs.retail").joinpath("data/db.json"))
    with open(out, "w") as fh:
        json.dump(generate(args.seed), fh, separators=(",", ":"))
        fh.write("\n")


if __name__ == "__main__":
    main()
